/*
 * s-code-launch: the exec helper of the command sandbox.
 *
 * The sidecar never uses preexec_fn. It starts this helper (inside bubblewrap in tier 1, directly in
 * tier 2), which, in this order: closes every fd above 2, changes directory, sets no-new-privs, drops
 * every capability, applies a Landlock ruleset (filesystem rules; TCP rules from ABI 4; signal and
 * abstract-socket scoping from ABI 6), loads a seccomp BPF program built by the sidecar with
 * libseccomp, and execs the command. With --reap it first becomes a child subreaper and supervises:
 * when the command ends, or on SIGTERM/SIGINT/SIGHUP, every descendant is killed and reaped, so
 * nothing outlives the command even without a PID namespace. The supervisor also gets SIGTERM when
 * the sidecar dies (PR_SET_PDEATHSIG), so a command that kills the sidecar dies with it.
 *
 *   s-code-launch [--chdir DIR] [--ro PATH]... [--rw PATH]... [--no-net] [--scope]
 *                 [--seccomp FILE] [--reap] [--no-landlock] [--max-procs N] [--max-rss BYTES]
 *                 [--disk PATH]... [--count-fs PATH]... [--max-file-size BYTES]
 *                 [--host] [--track DIR [--no-cgroup]] -- COMMAND [ARG]...
 *
 * --host: a host process the user installed (an MCP server, a hook, a terminal), which runs with
 * the user's own authority: no Landlock, no seccomp, privileges kept; with --reap it is only
 * supervised (its whole tree dies with it, and with the sidecar). --track DIR (with --reap): a
 * record of the tree in DIR, for the next sidecar should this supervisor be killed outright: the
 * command in a cgroup of its own, or (none can be made, or --no-cgroup) a list of its processes
 * (see "Tracking" below).
 *
 * Limits: --max-file-size is RLIMIT_FSIZE, and with --disk never more than the space the disk
 * guard lets the command use (free space at the start less the tenth it keeps): one file, however
 * fast it is written, cannot take a watched disk past its floor. The others are watched by the
 * supervisor (--reap) every 50 ms by the clock (a stream of signals does not put a look off) over
 * the whole process tree, which rlimits cannot do (RLIMIT_NPROC counts every process of the user,
 * and is not enforced at all for root): more than --max-procs tasks (processes and their threads), more than
 * --max-rss bytes of memory together (resident anonymous and shared pages of each process, and,
 * every half second, the size of every memory file -- memfd -- one of them holds open, and the
 * space used on each --count-fs file system, tier 1's /dev/shm; or, when more, what the machine's
 * MemAvailable lost or its Shmem gained since the start: memory no process's pages show, such as
 * socket buffers or a memfd kept only by an untouched mapping, so growth elsewhere on the
 * machine counts too), or a --disk file system left with less than a tenth of the space free
 * when the command started (looked at every 50 ms, and more often as the space above that floor
 * shrinks: down to every 1 ms, one statvfs each; several files written at once faster than that
 * can still pass the floor), and the whole tree is killed (exit 137, with a line "s-code-launch: stopped: ..." on stderr).
 *
 * The command runs in a process group of its own, and the tree is killed by group first: one
 * kill(2) the kernel makes atomic with fork(2), so processes that fork and exit in a loop cannot
 * outrun it the way they outrun kills by pid. (Tier 2's seccomp program makes setsid and setpgid
 * do nothing, so no process leaves the group; tier 1's PID namespace needs no such rule.) Then
 * kills by pid from /proc, for anything that left the group, until none is left or a bounded time
 * has passed.
 *
 * --version (alone) prints "s-code-launch ID" and exits 0: ID is what the build passed as
 * S_CODE_LAUNCH_ID (the first 16 hex digits of this file's SHA-256), so the sidecar can tell a
 * helper that runs here and matches its bundled source from one that does not.
 *
 * Exit status: the command's, or 128+signal; 125 when the helper itself failed (a one-line reason on
 * stderr, starting "s-code-launch:"), 126 when the command cannot be executed, 127 when not found.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* Landlock's ABI, spelled out so older kernel headers do not limit what the helper can ask for. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define MAX_PATHS 256

struct options {
    const char *chdir_to;
    const char *ro[MAX_PATHS];
    int n_ro;
    const char *rw[MAX_PATHS];
    int n_rw;
    int no_net, scope, reap, no_landlock, host;
    const char *seccomp;
    long max_procs;                  /* supervised: processes of the command together */
    unsigned long long max_rss;      /* supervised: resident bytes of the command together */
    const char *disk[4];             /* supervised: file systems that must keep free space */
    int n_disk;
    const char *count_fs[4];         /* supervised: in-memory file systems counted as memory */
    int n_count_fs;
    unsigned long long fsize;        /* RLIMIT_FSIZE: the largest file a process may write */
    const char *track;               /* supervised: where the record of the tree is kept */
    int no_cgroup;                   /* track by recorded pids even where a cgroup can be made */
    char **argv;
};

static void die(const char *what, int err) {
    if (err)
        fprintf(stderr, "s-code-launch: %s: %s\n", what, strerror(err));
    else
        fprintf(stderr, "s-code-launch: %s\n", what);
    _exit(125);
}

#ifndef S_CODE_LAUNCH_ID
#define S_CODE_LAUNCH_ID "unknown"
#endif

static void parse(int argc, char **argv, struct options *o) {
    memset(o, 0, sizeof *o);
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("s-code-launch %s\n", S_CODE_LAUNCH_ID);
        exit(0);
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        int has_value = strcmp(a, "--chdir") == 0 || strcmp(a, "--ro") == 0 ||
                        strcmp(a, "--rw") == 0 || strcmp(a, "--seccomp") == 0 ||
                        strcmp(a, "--max-procs") == 0 || strcmp(a, "--max-rss") == 0 ||
                        strcmp(a, "--disk") == 0 || strcmp(a, "--max-file-size") == 0 ||
                        strcmp(a, "--count-fs") == 0 || strcmp(a, "--track") == 0;
        if (has_value && i + 1 >= argc)
            die("an option lacks its value", 0);
        if (strcmp(a, "--chdir") == 0)
            o->chdir_to = argv[++i];
        else if (strcmp(a, "--ro") == 0 && o->n_ro < MAX_PATHS)
            o->ro[o->n_ro++] = argv[++i];
        else if (strcmp(a, "--rw") == 0 && o->n_rw < MAX_PATHS)
            o->rw[o->n_rw++] = argv[++i];
        else if (strcmp(a, "--seccomp") == 0)
            o->seccomp = argv[++i];
        else if (strcmp(a, "--max-procs") == 0)
            o->max_procs = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--max-rss") == 0)
            o->max_rss = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--max-file-size") == 0)
            o->fsize = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--disk") == 0 && o->n_disk < 4)
            o->disk[o->n_disk++] = argv[++i];
        else if (strcmp(a, "--count-fs") == 0 && o->n_count_fs < 4)
            o->count_fs[o->n_count_fs++] = argv[++i];
        else if (strcmp(a, "--track") == 0)
            o->track = argv[++i];
        else if (strcmp(a, "--no-cgroup") == 0)
            o->no_cgroup = 1;
        else if (strcmp(a, "--no-net") == 0)
            o->no_net = 1;
        else if (strcmp(a, "--scope") == 0)
            o->scope = 1;
        else if (strcmp(a, "--reap") == 0)
            o->reap = 1;
        else if (strcmp(a, "--no-landlock") == 0)
            o->no_landlock = 1;
        else if (strcmp(a, "--host") == 0)
            o->host = 1;
        else
            die("unknown option or too many paths", 0);
    }
    if (i >= argc)
        die("no command after --", 0);
    o->argv = &argv[i];
}

static void close_inherited_fds(void) {
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
        close((int)fd);
}

static void drop_privileges(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die("no-new-privs", errno);
    for (int cap = 0; cap <= 63; cap++)
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0); /* EPERM without CAP_SETPCAP: nothing to drop */
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0)
        die("dropping capabilities", errno);
}

static uint64_t fs_rights(int abi) {
    uint64_t all = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
    if (abi >= 2)
        all |= 1ULL << 13; /* REFER */
    if (abi >= 3)
        all |= LL_FS_TRUNCATE;
    if (abi >= 5)
        all |= LL_FS_IOCTL_DEV;
    return all;
}

static void add_path(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return; /* a root that does not exist grants nothing */
        die(path, errno);
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        die(path, errno);
    if (!S_ISDIR(st.st_mode)) /* only file rights apply to a file */
        access &= LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE |
                  LL_FS_IOCTL_DEV;
    struct ll_path_beneath_attr rule = {access & handled, fd};
    if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0)
        die(path, errno);
    close(fd);
}

static void apply_landlock(const struct options *o) {
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 1)
        die("Landlock is not available", errno);
    struct ll_ruleset_attr attr = {fs_rights(abi), 0, 0};
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        size = 2 * sizeof(uint64_t);
        if (o->no_net)
            attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    }
    if (abi >= 6) {
        size = sizeof attr;
        if (o->scope)
            attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0)
        die("creating the Landlock ruleset", errno);
    uint64_t read_only = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    for (int i = 0; i < o->n_ro; i++)
        add_path(ruleset, o->ro[i], read_only, attr.handled_access_fs);
    for (int i = 0; i < o->n_rw; i++)
        add_path(ruleset, o->rw[i], attr.handled_access_fs, attr.handled_access_fs);
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
        die("enforcing the Landlock ruleset", errno);
    close(ruleset);
}

static void apply_seccomp(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(path, errno);
    static struct sock_filter prog[4096];
    ssize_t n = read(fd, prog, sizeof prog);
    close(fd);
    if (n <= 0 || n % (ssize_t)sizeof(struct sock_filter) != 0)
        die("the seccomp program is empty or malformed", 0);
    struct sock_fprog fprog = {(unsigned short)(n / (ssize_t)sizeof(struct sock_filter)), prog};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
        die("loading the seccomp program", errno);
}

static void confine_and_exec(const struct options *o) {
    if (o->fsize > 0) {
        struct rlimit r = {o->fsize, o->fsize};
        if (setrlimit(RLIMIT_FSIZE, &r) != 0)
            die("setting the file-size limit", errno);
    }
    if (!o->no_landlock)
        apply_landlock(o);
    if (o->seccomp)
        apply_seccomp(o->seccomp);
    execvp(o->argv[0], o->argv);
    int err = errno;
    fprintf(stderr, "s-code-launch: %s: %s\n", o->argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* The command's process tree, from one pass over /proc (no CONFIG_PROC_CHILDREN needed): every
 * process whose parent chain reaches this supervisor, with the resident pages of each. */
struct tree {
    pid_t *pids;
    unsigned long long *starts;   /* each one's start time (clock ticks after boot) */
    int n, cap;
    long tasks;                   /* processes and their threads */
    unsigned long long mem_bytes; /* anonymous and shared resident memory */
};

struct proc_row {
    pid_t pid, ppid;
    long rss, threads;
    unsigned long long start;
};

/* A small /proc file into ``buf``, NUL-terminated; 0 when it cannot be read. */
static int read_small(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return 1;
}

static int read_stat(long pid, struct proc_row *row) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!read_small(path, buf, sizeof buf))
        return 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (!p)
        return 0;
    char state;
    long ppid, threads = 1, rss = 0;
    unsigned long long start = 0;
    /* after the name: state(3) ppid(4) ... num_threads(20) ... starttime(22) ... rss(24) */
    if (sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld "
                      "%*d %llu %*u %ld",
               &state, &ppid, &threads, &start, &rss) < 2)
        return 0;
    if (state == 'Z' && threads <= 1) /* a zombie holds no memory; reaped by its parent or us */
        rss = 0;
    else if (state == 'Z') /* a leader that exited while its threads run: they hold it all */
        rss = 1;
    row->pid = (pid_t)pid;
    row->ppid = (pid_t)ppid;
    row->rss = rss;
    row->threads = threads > 0 ? threads : 1;
    row->start = start;
    return 1;
}

/* RssAnon + RssShmem of a status file, in KiB; 0 when it has no such lines (a zombie's). */
static int status_kib(const char *path, unsigned long long *kib) {
    char buf[4096];
    if (!read_small(path, buf, sizeof buf))
        return 0;
    unsigned long long v;
    int found = 0;
    *kib = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (sscanf(line, "RssAnon: %llu", &v) == 1 || sscanf(line, "RssShmem: %llu", &v) == 1) {
            *kib += v;
            found++;
        }
    }
    return found == 2;
}

/* The directory of a live task of ``pid``: the process's own, or, when its leader exited while
 * other threads run (a zombie leader shows no memory and no files), one of those threads'. */
static int live_task_dir(pid_t pid, const char *what, char *out, size_t size) {
    snprintf(out, size, "/proc/%d/%s", (int)pid, what);
    unsigned long long kib;
    char status[160];
    snprintf(status, sizeof status, "/proc/%d/status", (int)pid);
    if (status_kib(status, &kib))
        return 1;
    char tasks[64];
    snprintf(tasks, sizeof tasks, "/proc/%d/task", (int)pid);
    DIR *d = opendir(tasks);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atol(e->d_name) == (long)pid)
            continue;
        snprintf(status, sizeof status, "/proc/%d/task/%.16s/status", (int)pid, e->d_name);
        if (status_kib(status, &kib)) {
            snprintf(out, size, "/proc/%d/task/%.16s/%s", (int)pid, e->d_name, what);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

/* Resident memory not backed by a file on disk (RssAnon + RssShmem): what a memory hog grows,
 * whether private (a heap) or shared (MAP_SHARED|MAP_ANONYMOUS, a memfd or tmpfs file mapped);
 * libraries and the executable are left out, so forked processes do not count their code twice. */
static unsigned long long memory_bytes(pid_t pid, long rss) {
    if (rss <= 0)
        return 0;
    unsigned long long fallback = (unsigned long long)rss * (unsigned long long)sysconf(_SC_PAGESIZE);
    char path[160];
    unsigned long long kib;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (status_kib(path, &kib) ||
        (live_task_dir(pid, "status", path, sizeof path) && status_kib(path, &kib)))
        return kib << 10;
    return fallback;
}

/* The bytes held in memory files (memfd_create) the tree has open, each counted once: written
 * with write(2) and never mapped, they are in no process's resident memory. */
struct file_id {
    dev_t dev;
    ino_t ino;
};

static unsigned long long memfd_bytes(const struct tree *t) {
    static struct file_id *seen;
    static int seen_cap;
    int n_seen = 0;
    unsigned long long total = 0;
    for (int i = 0; i < t->n; i++) {
        char dir_path[96];
        if (!live_task_dir(t->pids[i], "fd", dir_path, sizeof dir_path))
            continue;
        DIR *d = opendir(dir_path);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char link[160], target[64];
            snprintf(link, sizeof link, "%.120s/%.16s", dir_path, e->d_name);
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len < 7 || strncmp(target, "/memfd:", 7) != 0)
                continue;
            struct stat st;
            if (stat(link, &st) != 0)
                continue;
            int dup = 0;
            for (int k = 0; k < n_seen && !dup; k++)
                dup = seen[k].dev == st.st_dev && seen[k].ino == st.st_ino;
            if (dup)
                continue;
            if (n_seen == seen_cap) {
                seen_cap = seen_cap ? seen_cap * 2 : 64;
                seen = realloc(seen, (size_t)seen_cap * sizeof *seen);
                if (!seen)
                    die("out of memory", 0);
            }
            seen[n_seen++] = (struct file_id){st.st_dev, st.st_ino};
            total += (unsigned long long)st.st_blocks * 512ULL;
        }
        closedir(d);
    }
    return total;
}

static void scan_tree(pid_t self, struct tree *t) {
    static struct proc_row *rows;
    static int rows_cap;
    int n = 0;
    t->n = 0;
    t->tasks = 0;
    t->mem_bytes = 0;
    DIR *proc = opendir("/proc");
    if (!proc)
        return;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        if (n == rows_cap) {
            rows_cap = rows_cap ? rows_cap * 2 : 1024;
            rows = realloc(rows, (size_t)rows_cap * sizeof *rows);
            if (!rows)
                die("out of memory", 0);
        }
        if (read_stat(pid, &rows[n]))
            n++;
    }
    closedir(proc);
    /* Grow the set of descendants pass by pass (a tree is shallow: orphans come to us). */
    if (t->cap < n) {
        t->cap = n;
        t->pids = realloc(t->pids, (size_t)t->cap * sizeof *t->pids);
        t->starts = realloc(t->starts, (size_t)t->cap * sizeof *t->starts);
        if (!t->pids || !t->starts)
            die("out of memory", 0);
    }
    pid_t top = self;
    for (int i = 0; i < n; i++)
        if (rows[i].pid > top)
            top = rows[i].pid;
    char *mark = calloc((size_t)top + 1, 1); /* pid -> in the tree (pid_max is at most 4M) */
    if (!mark)
        die("out of memory", 0);
    mark[self] = 1;
    for (int pass = 0, grew = 1; grew && pass < 256; pass++) {
        grew = 0;
        for (int i = 0; i < n; i++) {
            if (mark[rows[i].pid] || rows[i].ppid < 0 || rows[i].ppid > top || !mark[rows[i].ppid])
                continue;
            mark[rows[i].pid] = 1;
            t->starts[t->n] = rows[i].start;
            t->pids[t->n++] = rows[i].pid;
            t->tasks += rows[i].threads;
            t->mem_bytes += memory_bytes(rows[i].pid, rows[i].rss);
            grew = 1;
        }
    }
    free(mark);
}

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void reap_all(void) {
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
}

/* Kill the command's process group (atomic with fork), then every process left in the tree, again
 * and again until none is left (a process that forks while its siblings are being killed is caught
 * by the next pass), for at most ten seconds. Returns whether the tree is gone. */
static int kill_tree(pid_t self, pid_t group, struct tree *t) {
    double until = seconds() + 10.0;
    if (group > 0)
        while (kill(-group, SIGKILL) == 0 && seconds() < until)
            reap_all(); /* until no member of the group is left (ESRCH) */
    while (seconds() < until) {
        reap_all();
        scan_tree(self, t);
        if (t->n == 0)
            return 1;
        for (int i = 0; i < t->n; i++)
            kill(t->pids[i], SIGKILL);
        if (group > 0)
            kill(-group, SIGKILL);
    }
    return 0;
}

/* Tracking (--track DIR). A supervisor killed outright (SIGKILL, the OOM killer) can neither end
 * its tree nor learn that the sidecar died, and its descendants are reparented to init. So that
 * the next sidecar finds every one of them, the supervisor writes a record, DIR/<pid>-<start>,
 * before the command starts:
 *   - where this user may make a cgroup v2 child of its own cgroup, the command is created in one
 *     of its own ("s-code-host-<pid>-<start>", clone3 with CLONE_INTO_CGROUP: no migration, which
 *     would cost a grace period, 10 ms and more): the kernel keeps every descendant there, setsid
 *     or not, and one write to cgroup.kill ends them all (Linux 5.14). The record names it.
 *   - otherwise the record lists the descendants (pid and start time), rewritten every second when
 *     they changed, and the command's environment carries S_CODE_HOST_TREE=<pid>.<start>, which
 *     descendants inherit: one born since the last listing is found by it.
 * When the command ends, the tree is killed (through the cgroup too), the cgroup removed and the
 * record deleted: a record left behind is the tree of a supervisor that was killed. */
#define TRACK_EVERY 1.0
#define TREE_ENV "S_CODE_HOST_TREE"
#define CG_PATH 4096
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#define CLONE_INTO_CGROUP_FLAG 0x200000000ULL

struct clone3_args { /* struct clone_args up to its cgroup field (CLONE_ARGS_SIZE_VER2) */
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
};

struct track {
    int on;
    unsigned long long start;    /* this supervisor's start time */
    char id[64];                 /* "<pid>.<start>" */
    char record[CG_PATH + 64];
    char cgroup[CG_PATH + 64];   /* the command's cgroup; "" when none */
    int cgroup_fd;               /* open until the command is created in it */
    int n;                       /* the descendants last written */
    pid_t *pids;
    unsigned long long *starts;
};

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t n = write(fd, text, strlen(text));
    int err = n < 0 ? errno : 0;
    close(fd);
    return err;
}

/* A mountinfo field's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s) {
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* This process's cgroup v2 directory: its path in /proc/self/cgroup ("0::PATH") under the
 * cgroup2 mount that shows it. 0 when there is none (no unified hierarchy mounted here). */
static int own_cgroup(char *out, size_t size) {
    char buf[8192];
    if (!read_small("/proc/self/cgroup", buf, sizeof buf))
        return 0;
    char *path = NULL;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "0::", 3) == 0) {
            path = line + 3;
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!path || path[0] != '/')
        return 0;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return 0;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *sep = strstr(line, " - cgroup2 ");
        if (!sep)
            continue;
        *sep = '\0';
        char *fields[5], *save = NULL; /* id parent major:minor root mount-point */
        int k = 0;
        for (char *tok = strtok_r(line, " ", &save); tok && k < 5; tok = strtok_r(NULL, " ", &save))
            fields[k++] = tok;
        if (k < 5)
            continue;
        unescape(fields[3]);
        unescape(fields[4]);
        const char *rest = path;
        size_t root_len = strlen(fields[3]);
        if (strcmp(fields[3], "/") != 0) { /* a mount of a subtree: PATH must be inside it */
            if (strncmp(path, fields[3], root_len) != 0 || (path[root_len] && path[root_len] != '/'))
                continue;
            rest = path + root_len;
        }
        snprintf(out, size, "%s%s", fields[4], strcmp(rest, "/") == 0 ? "" : rest);
        found = access(out, W_OK) == 0;
    }
    fclose(f);
    return found;
}

/* A cgroup and the (empty) ones below it removed; whether it is gone. */
static int remove_cgroup(const char *path, int depth) {
    DIR *d = depth < 32 ? opendir(path) : NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[CG_PATH + 320];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_cgroup(sub, depth + 1);
        }
        closedir(d);
    }
    return rmdir(path) == 0 || errno == ENOENT;
}

static void make_cgroup(struct track *tr) {
    char parent[CG_PATH];
    if (!own_cgroup(parent, sizeof parent) || strchr(parent, '\n'))
        return;
    snprintf(tr->cgroup, sizeof tr->cgroup, "%s/s-code-host-%d-%llu", parent, (int)getpid(),
             tr->start);
    if (mkdir(tr->cgroup, 0755) != 0) {
        tr->cgroup[0] = '\0';
        return;
    }
    char path[sizeof tr->cgroup + 32];
    snprintf(path, sizeof path, "%s/cgroup.kill", tr->cgroup);
    /* no cgroup.kill before Linux 5.14: a list instead */
    if (access(path, W_OK) != 0 ||
        (tr->cgroup_fd = open(tr->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        tr->cgroup_fd = -1;
        rmdir(tr->cgroup);
        tr->cgroup[0] = '\0';
    }
}

/* The record, replaced atomically (a reader never sees half of it). */
static void write_record(const struct track *tr) {
    char tmp[sizeof tr->record + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", tr->record);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    fprintf(f, "s-code-host-tree 1\nhelper %d %llu\n", (int)getpid(), tr->start);
    if (tr->cgroup[0])
        fprintf(f, "cgroup %s\n", tr->cgroup);
    for (int i = 0; i < tr->n; i++)
        fprintf(f, "pid %d %llu\n", (int)tr->pids[i], tr->starts[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, tr->record) != 0)
        unlink(tmp);
}

static void track_start(const struct options *o, struct track *tr) {
    memset(tr, 0, sizeof *tr);
    tr->cgroup_fd = -1;
    struct proc_row self;
    if (!o->track || !read_stat((long)getpid(), &self))
        return;
    tr->start = self.start;
    snprintf(tr->id, sizeof tr->id, "%d.%llu", (int)getpid(), tr->start);
    snprintf(tr->record, sizeof tr->record, "%s/%d-%llu", o->track, (int)getpid(), tr->start);
    if (!o->no_cgroup)
        make_cgroup(tr);
    tr->on = 1;
    write_record(tr);
}

/* Without a cgroup: the descendants now, written when they are not those last written. */
static void track_tree(struct track *tr, pid_t self, struct tree *t) {
    scan_tree(self, t);
    int same = t->n == tr->n;
    for (int i = 0; same && i < t->n; i++)
        same = t->pids[i] == tr->pids[i] && t->starts[i] == tr->starts[i];
    if (same)
        return;
    tr->pids = realloc(tr->pids, (size_t)(t->n + 1) * sizeof *tr->pids);
    tr->starts = realloc(tr->starts, (size_t)(t->n + 1) * sizeof *tr->starts);
    if (!tr->pids || !tr->starts)
        die("out of memory", 0);
    memcpy(tr->pids, t->pids, (size_t)t->n * sizeof *tr->pids);
    memcpy(tr->starts, t->starts, (size_t)t->n * sizeof *tr->starts);
    tr->n = t->n;
    write_record(tr);
}

/* The command, created in its cgroup where there is one (else forked, and listed). Returns as
 * fork() does. The raw clone3 leaves the C library's cached thread id stale in the child, which
 * only execs (nothing it calls before that uses it). */
static pid_t spawn_command(struct track *tr) {
    if (tr->cgroup_fd >= 0) {
        struct clone3_args args;
        memset(&args, 0, sizeof args);
        args.flags = CLONE_INTO_CGROUP_FLAG;
        args.exit_signal = SIGCHLD;
        args.cgroup = (uint64_t)tr->cgroup_fd;
        long pid = syscall(SYS_clone3, &args, sizeof args);
        if (pid > 0) {
            close(tr->cgroup_fd);
            tr->cgroup_fd = -1;
        }
        if (pid >= 0)
            return (pid_t)pid;
        /* not allowed here (before Linux 5.7, or not this user's cgroup): a list instead */
        close(tr->cgroup_fd);
        rmdir(tr->cgroup);
        tr->cgroup[0] = '\0';
        write_record(tr);
    }
    tr->cgroup_fd = -1;
    return fork();
}

/* Everything in the command's cgroup killed: one write, which the kernel makes atomic with
 * fork (the supervisor itself is not in it). */
static void cgroup_kill(const struct track *tr) {
    if (!tr->cgroup[0])
        return;
    char path[sizeof tr->cgroup + 32];
    snprintf(path, sizeof path, "%s/cgroup.kill", tr->cgroup);
    write_file(path, "1");
}

/* The cgroup removed once empty, and the record deleted when nothing of the tree is left. */
static void track_end(struct track *tr, int gone) {
    if (!tr->on)
        return;
    if (tr->cgroup[0]) {
        int removed;
        double until = seconds() + 2.0;
        while (!(removed = remove_cgroup(tr->cgroup, 0)) && seconds() < until) {
            reap_all();
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        gone = gone && removed;
    }
    if (gone)
        unlink(tr->record);
}

static unsigned long long free_bytes(const char *path) {
    struct statvfs v;
    if (statvfs(path, &v) != 0)
        return ~0ULL;
    return (unsigned long long)v.f_bavail * v.f_frsize;
}

static unsigned long long used_bytes(const char *path) {
    struct statvfs v;
    if (statvfs(path, &v) != 0 || v.f_bfree > v.f_blocks)
        return 0;
    return (unsigned long long)(v.f_blocks - v.f_bfree) * v.f_frsize;
}

/* The machine's MemAvailable and Shmem: memory no process's pages show still moves them (a
 * memfd kept only by a mapping never touched is Shmem; socket buffers and pipes lower
 * MemAvailable). 0 when /proc/meminfo cannot be read. */
struct machine_memory {
    unsigned long long available, shmem;
};

static struct machine_memory machine_memory(void) {
    struct machine_memory m = {0, 0};
    char buf[4096];
    if (!read_small("/proc/meminfo", buf, sizeof buf))
        return m;
    const char *at = strstr(buf, "MemAvailable:");
    unsigned long long kib;
    if (at && sscanf(at, "MemAvailable: %llu", &kib) == 1)
        m.available = kib << 10;
    at = strstr(buf, "\nShmem:");
    if (at && sscanf(at + 1, "Shmem: %llu", &kib) == 1)
        m.shmem = kib << 10;
    return m;
}

/* A --disk file system left with less than its floor, or NULL. *next: seconds until the next
 * look, shorter as the space above the floor shrinks, so that a writer at DISK_RATE could not use
 * it all up in between: 50 ms down to 1 ms (a look is one statvfs per file system). */
#define DISK_RATE 8e9
static const char *disk_low(const struct options *o, const unsigned long long *floor,
                            double *next, char *why, size_t size) {
    double room = 1e18;
    for (int i = 0; i < o->n_disk; i++) {
        unsigned long long free_now = free_bytes(o->disk[i]);
        if (free_now < floor[i]) {
            snprintf(why, size, "the disk of %s is nearly full (less than a tenth of the space "
                     "free at the start is left)", o->disk[i]);
            return why;
        }
        if ((double)(free_now - floor[i]) < room)
            room = (double)(free_now - floor[i]);
    }
    double in = room / DISK_RATE;
    *next = in < 0.001 ? 0.001 : in > 0.05 ? 0.05 : in;
    return NULL;
}

/* Why the command must stop now, or NULL: too many processes or too much memory. */
static const char *over_limit(const struct options *o, pid_t self, struct tree *t,
                              const struct machine_memory *at_start,
                              int look_at_files, char *why, size_t size) {
    static unsigned long long in_files; /* memory files: looked at every half second */
    scan_tree(self, t);
    if (o->max_procs > 0 && t->tasks > o->max_procs) {
        snprintf(why, size, "more than %ld processes and threads", o->max_procs);
        return why;
    }
    if (look_at_files && o->max_rss > 0)
        in_files = memfd_bytes(t);
    unsigned long long rss = t->mem_bytes + in_files;
    for (int i = 0; i < o->n_count_fs; i++)
        rss += used_bytes(o->count_fs[i]);
    /* what the machine lost since the start, or the shared memory it gained, if more */
    struct machine_memory now = machine_memory();
    if (now.available && now.available < at_start->available &&
        at_start->available - now.available > rss)
        rss = at_start->available - now.available;
    if (now.shmem > at_start->shmem && now.shmem - at_start->shmem > rss)
        rss = now.shmem - at_start->shmem;
    if (o->max_rss > 0 && rss > o->max_rss) {
        snprintf(why, size, "more than %llu MiB of memory", o->max_rss >> 20);
        return why;
    }
    return NULL;
}

static double earliest(double a, double b, double c) {
    double m = a < b ? a : b;
    return m < c ? m : c;
}

static int supervise(struct options *o) {
    pid_t parent = getppid();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        die("becoming a child subreaper", errno);
    /* If the sidecar dies, SIGTERM arrives here and the whole tree is killed below. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
        die("setting the parent-death signal", errno);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    if (getppid() != parent) /* the sidecar died before the signal was armed */
        raise(SIGTERM);
    unsigned long long floor[4], room = ~0ULL;
    for (int i = 0; i < o->n_disk; i++) {
        unsigned long long free_now = free_bytes(o->disk[i]);
        floor[i] = free_now / 10;
        if (free_now - floor[i] < room)
            room = free_now - floor[i];
    }
    /* No file may be larger than the space above the floor, whole MiB, less one for the file
     * system's own blocks (RLIMIT_FSIZE: the kernel refuses the rest, EFBIG): one writer, however
     * fast, cannot take the disk past the floor between two looks. (limits.py: the same.) */
    unsigned long long bound = room >= (2ULL << 20) ? (room >> 20 << 20) - (1ULL << 20) : 4096;
    if (o->n_disk > 0 && (o->fsize == 0 || bound < o->fsize))
        o->fsize = bound;
    struct machine_memory at_start = machine_memory();
    struct track tr;
    track_start(o, &tr);
    pid_t main_pid = spawn_command(&tr);
    if (main_pid < 0)
        die("fork", errno);
    int by_pids = tr.on && !tr.cgroup[0];
    if (main_pid == 0) {
        setpgid(0, 0); /* a group of its own: killed at once (see above) */
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (by_pids)
            setenv(TREE_ENV, tr.id, 1);
        confine_and_exec(o);
    }
    setpgid(main_pid, main_pid); /* either of the two calls wins the race with the exec */
    pid_t self = getpid();
    struct tree t = {0};
    char why[256];
    int status = 0, done = 0, looks = 0;
    const double every = 0.05; /* seconds between looks at processes and memory */
    const double never = seconds() + 1e12;
    double next_look = o->max_procs > 0 || o->max_rss > 0 ? seconds() + every : never;
    double next_disk = o->n_disk > 0 ? seconds() : never;
    double next_track = by_pids ? seconds() + TRACK_EVERY : never;
    while (!done) {
        siginfo_t info;
        double next = earliest(next_look, next_disk, next_track);
        double wait_s = next - seconds();
        if (wait_s < 0)
            wait_s = 0;
        struct timespec tick = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
        int sig = next < never ? sigtimedwait(&set, &info, &tick) : sigwaitinfo(&set, &info);
        double now = seconds(); /* by the clock, signals or not */
        const char *stop = NULL;
        if (now >= next_disk) {
            double in = every;
            stop = disk_low(o, floor, &in, why, sizeof why);
            next_disk = now + in;
        }
        if (!stop && now >= next_look) {
            next_look = now + every;
            stop = over_limit(o, self, &t, &at_start, looks++ % 10 == 0, why, sizeof why);
        }
        if (stop) {
            fprintf(stderr, "\ns-code-launch: stopped: %s\n", stop);
            status = 137;
            break;
        }
        if (now >= next_track) {
            track_tree(&tr, self, &t);
            next_track = now + TRACK_EVERY;
        }
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            status = 128 + sig;
            break;
        }
        int st;
        pid_t r;
        while ((r = waitpid(-1, &st, WNOHANG)) > 0) {
            if (r == main_pid) {
                status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                done = 1;
            }
        }
    }
    /* Nothing outlives the command: orphans were reparented here; kill and reap until none
     * (the cgroup first, where there is one: one write ends all of it). */
    cgroup_kill(&tr);
    int gone = kill_tree(self, main_pid, &t);
    if (!gone)
        fprintf(stderr, "\ns-code-launch: processes of the command could not all be stopped\n");
    reap_all();
    track_end(&tr, gone);
    return status;
}

int main(int argc, char **argv) {
    struct options o;
    parse(argc, argv, &o);
    close_inherited_fds();
    if (o.chdir_to && chdir(o.chdir_to) != 0)
        die(o.chdir_to, errno);
    if (o.host) { /* a host process: the user's own authority, only supervised */
        o.no_landlock = 1;
        o.seccomp = NULL;
    } else {
        drop_privileges();
    }
    if (o.reap)
        return supervise(&o);
    confine_and_exec(&o);
    return 125;
}
