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
 *                 [--seccomp FILE] [--reap] [--no-landlock] -- COMMAND [ARG]...
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
    int no_net, scope, reap, no_landlock;
    const char *seccomp;
    char **argv;
};

static void die(const char *what, int err) {
    if (err)
        fprintf(stderr, "s-code-launch: %s: %s\n", what, strerror(err));
    else
        fprintf(stderr, "s-code-launch: %s\n", what);
    _exit(125);
}

static void parse(int argc, char **argv, struct options *o) {
    memset(o, 0, sizeof *o);
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        int has_value = strcmp(a, "--chdir") == 0 || strcmp(a, "--ro") == 0 ||
                        strcmp(a, "--rw") == 0 || strcmp(a, "--seccomp") == 0;
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
        else if (strcmp(a, "--no-net") == 0)
            o->no_net = 1;
        else if (strcmp(a, "--scope") == 0)
            o->scope = 1;
        else if (strcmp(a, "--reap") == 0)
            o->reap = 1;
        else if (strcmp(a, "--no-landlock") == 0)
            o->no_landlock = 1;
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
    if (!o->no_landlock)
        apply_landlock(o);
    if (o->seccomp)
        apply_seccomp(o->seccomp);
    execvp(o->argv[0], o->argv);
    int err = errno;
    fprintf(stderr, "s-code-launch: %s: %s\n", o->argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* The direct children of this process, found by scanning /proc (no CONFIG_PROC_CHILDREN needed). */
static int kill_children(pid_t self) {
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        char state;
        long ppid;
        if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) {
            kill((pid_t)pid, SIGKILL);
            found++;
        }
    }
    closedir(proc);
    return found;
}

static int supervise(const struct options *o) {
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
    pid_t main_pid = fork();
    if (main_pid < 0)
        die("fork", errno);
    if (main_pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        confine_and_exec(o);
    }
    int status = 0, done = 0;
    while (!done) {
        siginfo_t info;
        if (sigwaitinfo(&set, &info) < 0)
            continue;
        if (info.si_signo != SIGCHLD) {
            kill(main_pid, SIGKILL);
            status = 128 + info.si_signo;
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
    /* Nothing outlives the command: orphans were reparented here; kill and reap until none. */
    pid_t self = getpid();
    for (;;) {
        kill_children(self);
        int st;
        pid_t r = waitpid(-1, &st, 0);
        if (r < 0 && errno == ECHILD)
            break;
    }
    return status;
}

int main(int argc, char **argv) {
    struct options o;
    parse(argc, argv, &o);
    close_inherited_fds();
    if (o.chdir_to && chdir(o.chdir_to) != 0)
        die(o.chdir_to, errno);
    drop_privileges();
    if (o.reap)
        return supervise(&o);
    confine_and_exec(&o);
    return 125;
}
