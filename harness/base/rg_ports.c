/* SPDX-License-Identifier: MIT */
/* Loopback ports: one free a moment ago, and whether something listens on one now. */
#include "base/rg_base.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP port on loopback that no one held a moment ago (0 lets the kernel pick). */
int rg_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Whether a TCP socket listens on `port` (any address, IPv4 or IPv6): /proc/net/tcp{,6} say so
 * without connecting, which would take a one-shot server's only accept. */
bool rg_port_listening(int port)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        FILE *f = fopen(files[i], "r");
        char line[512];
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f)) {
            char local[128];
            unsigned st;
            /* "  0: 0100007F:1F90 00000000:0000 0A ...": local address:port, remote, state */
            if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2 || st != 0x0A)
                continue;
            const char *colon = strrchr(local, ':');
            if (colon && strtol(colon + 1, NULL, 16) == port) {
                fclose(f);
                return true;
            }
        }
        fclose(f);
    }
    return false;
}
