;;; run.el --- s-code in a real Emacs with eglot, headless  -*- lexical-binding: t -*-
;; emacs --batch -Q -l CONFIG -l run.el WORKSPACE < answers
;; The minibuffer reads the user's answers from stdin (batch mode): "Show details", then
;; "Approve once", then an empty line (a stray RET).
(require 'cl-lib)
(require 'subr-x)

(defvar s-code-test-ws (expand-file-name (car command-line-args-left)))
(setq command-line-args-left nil)
(setq eglot-sync-connect t eglot-connect-timeout 60)

(defvar s-code-test-prompts nil "The questions the minibuffer showed.")
(advice-add 'completing-read :before
            (lambda (prompt &rest _) (push prompt s-code-test-prompts)))

(defun check (ok what)
  (unless ok
    (princ (format "FAIL %s\n" what) #'external-debugging-output)
    (kill-emacs 1)))

(defun disk (rel)
  (with-temp-buffer
    (insert-file-contents (expand-file-name rel s-code-test-ws))
    (buffer-string)))

(defun edit-line (rel revision line text)
  (s-code-tool "apply_patch"
               (list :files
                     (vector (list :path rel :expected_revision revision
                                   :edits (vector (list :start_line line :end_line line
                                                        :new_text text)))))))

(condition-case err
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" s-code-test-ws))))
      (set-buffer buf)
      (text-mode)
      (apply #'eglot (eglot--guess-contact))
      (let ((server (eglot-current-server)))
        (check server "eglot started s-code")
        (check (equal (plist-get (eglot--server-info server) :name) "s-code") "serverInfo")
        ;; 1. what the user typed, unsaved, is what the agent reads
        (goto-char (point-max))
        (insert "typed, not saved\n")
        (let* ((r (s-code-tool "read_file" '(:path "a.txt")))
               (numbered (plist-get r :numbered_content)))
          (check (string-match-p "typed, not saved" numbered) (format "read the buffer: %S" r))
          (check (equal (plist-get r :source) "buffer") "source is the buffer")
          (check (equal (disk "a.txt") "one\ntwo\nthree\n") "disk untouched by typing")
          ;; a tool without arguments: Lisp nil must go out as an object
          (check (> (length (plist-get (s-code-tool "list_files") :entries)) 0) "list_files with no arguments")
          ;; 2. an edit: asked in the minibuffer (details, then approve); lands in the buffer
          (let* ((result (edit-line "a.txt" (plist-get r :revision) 1 "ONE"))
                 (applied (aref (plist-get result :applied) 0)))
            (check (equal (plist-get applied :via) "editor") (format "via the editor: %S" result))
            (check (= (length s-code-test-prompts) 2) (format "asked twice: %S" s-code-test-prompts))
            (check (string-match-p "Edit a.txt" (car s-code-test-prompts)) "the prompt names the file")
            (check (equal (buffer-substring-no-properties (point-min) (line-end-position 0))
                          "ONE\ntwo\nthree\ntyped, not saved")
                   (format "the buffer: %S" (buffer-string)))
            (check (buffer-modified-p) "the edit stays unsaved")
            (check (equal (disk "a.txt") "one\ntwo\nthree\n") "disk untouched by the edit")
            ;; 3. a stray RET at the next prompt denies
            (let* ((r2 (s-code-tool "read_file" '(:path "a.txt")))
                   (denied (condition-case e
                               (progn (edit-line "a.txt" (plist-get r2 :revision) 2 "TWO") nil)
                             (jsonrpc-error e))))
              (check denied "a stray RET denied the edit")
              (check (let ((case-fold-search nil)) (string-match-p "\ntwo\n" (buffer-string)))
                     "the buffer is unchanged"))
            ;; 4. the turn undone: back in the buffer
            (s-code-call "s-code/turn/undo" (list :turnId (plist-get result :turn_id)))
            (check (string-prefix-p "one\n" (buffer-string))
                   (format "undo restored the buffer: %S" (buffer-string)))
            (check (string-match-p "typed, not saved" (buffer-string)) "the user's text survives")))
        ;; 5. shutdown
        (eglot-shutdown server)
        (check (not (jsonrpc-running-p server)) "the server stopped")
        (princ "ok emacs\n" #'external-debugging-output)
        (kill-emacs 0)))
  (error
   (princ (format "FAIL error %S\n" err) #'external-debugging-output)
   (kill-emacs 1)))
