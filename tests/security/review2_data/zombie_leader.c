#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *hog(void *arg) {
    size_t n = (size_t)400 << 20;
    volatile char *p = malloc(n);
    for (size_t i = 0; i < n; i += 4096) /* touched page by page: resident, not optimized out */
        p[i] = 1;
    sleep(2);
    printf("survived with 400 MiB\n");
    fflush(stdout);
    exit(0);
}
int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, hog, NULL);
    pthread_exit(NULL);
}
