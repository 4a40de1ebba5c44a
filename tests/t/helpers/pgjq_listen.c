/*
 * pgjq_listen.c: a worker that only LISTENs, for the TAP tests. It connects, LISTENs on pgjq_new_job,
 * prints "ready" once listening, then blocks in select() on the connection's socket (it never polls the
 * server) and prints "<epoch seconds with microseconds> <payload>" for each notification, until the
 * given number of notifications for the given queue arrived or the timeout (seconds) ran out.
 * Usage: pgjq_listen CONNINFO QUEUE COUNT TIMEOUT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <libpq-fe.h>

static double now_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s CONNINFO QUEUE COUNT TIMEOUT\n", argv[0]);
        return 2;
    }
    const char *queue = argv[2];
    int wanted = atoi(argv[3]);
    double deadline = now_seconds() + atof(argv[4]);
    PGconn *conn = PQconnectdb(argv[1]);
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "connection failed: %s", PQerrorMessage(conn));
        return 1;
    }
    PGresult *res = PQexec(conn, "LISTEN pgjq_new_job");
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        fprintf(stderr, "LISTEN failed: %s", PQerrorMessage(conn));
        return 1;
    }
    PQclear(res);
    printf("ready\n");
    fflush(stdout);
    int got = 0;
    while (got < wanted) {
        double left = deadline - now_seconds();
        if (left <= 0) {
            fprintf(stderr, "timed out after %d notification(s)\n", got);
            return 1;
        }
        int sock = PQsocket(conn);
        fd_set input;
        FD_ZERO(&input);
        FD_SET(sock, &input);
        struct timeval tv = {(long) left, (long) ((left - (long) left) * 1e6)};
        if (select(sock + 1, &input, NULL, NULL, &tv) < 0) {
            perror("select");
            return 1;
        }
        if (!PQconsumeInput(conn)) {
            fprintf(stderr, "connection lost: %s", PQerrorMessage(conn));
            return 1;
        }
        PGnotify *n;
        while ((n = PQnotifies(conn)) != NULL) {
            if (strcmp(n->extra, queue) == 0) {
                printf("%.6f %s\n", now_seconds(), n->extra);
                fflush(stdout);
                got++;
            }
            PQfreemem(n);
        }
    }
    PQfinish(conn);
    return 0;
}
