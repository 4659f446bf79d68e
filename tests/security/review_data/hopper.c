/* A self-healing swarm of pid hoppers (review finding r9): each of LINES lineages forks and
 * exits in a loop, so a SIGKILL by pid from a /proc scan lands on a pid already gone; a lineage
 * that stops beating is revived (once: compare-and-swap) by another, and a stale copy of a
 * lineage exits, so the swarm stays at about LINES processes (argv[3], default 128). When a
 * member finds it was reparented past the supervisor (it died), the swarm stops and that member
 * acts after a delay (argv[4] ms, default 2000): it appends argv[2] to the file argv[1]. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINES 1024
struct slot { volatile long long beat; volatile int token; };
struct shared { volatile int next, escaped; struct slot s[MAX_LINES]; };

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int lines = argc > 3 ? atoi(argv[3]) : 128;
    int delay_ms = argc > 4 ? atoi(argv[4]) : 2000;
    if (lines < 1 || lines > MAX_LINES || delay_ms < 0) return 2;
    pid_t sup = getppid();
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    if (fork() != 0) { usleep(300000); return 0; } /* the command "ends" once the swarm is up */
    setsid(); /* out of the helper's process group: its killpg misses us */
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0), dup2(null, 1), dup2(null, 2);
    int line = 0;
    for (int i = 1; i < lines; i++) if (fork() == 0) { line = i; break; }
    int token = 0;
    unsigned seed = (unsigned)getpid();
    for (;;) {
        if (sh->escaped || sh->s[line].token != token) _exit(0);
        pid_t me = getpid();
        sh->s[line].beat = now();
        int other = rand_r(&seed) % lines;
        long long old = sh->s[other].beat;
        if (now() - old > 1000000LL && __sync_bool_compare_and_swap(&sh->s[other].beat, old, now())) {
            int t = __sync_add_and_fetch(&sh->next, 1);
            sh->s[other].token = t;
            if (fork() == 0) { line = other; token = t; continue; }
        }
        pid_t p = fork();
        if (p > 0) _exit(0);
        if (p < 0) continue;
        pid_t pp = getppid();
        if (pp != sup && pp != me && !__sync_lock_test_and_set(&sh->escaped, 1)) break;
    }
    usleep((useconds_t)delay_ms * 1000); /* the sidecar has run its check after the command */
    FILE *f = fopen(argv[1], "a");
    if (f) { fprintf(f, "%s\n", argv[2]); fclose(f); }
    return 0;
}
