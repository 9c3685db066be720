/* SPDX-License-Identifier: MIT */
/*
 * The progress page (rg_faultinject.h): this process's slot in the file RG_FI_PROGRESS names,
 * counted into as the program posts, polls and takes completions, and as the shim holds a
 * thread or a send. The runner made the file; the shim only maps it and takes a slot, so a
 * page that is missing, short or of another version is no page at all (the counts then go to a
 * slot of the process's own, which nobody reads) and the runner, seeing no slot of this pid,
 * cannot judge the rank early: never an error of the program's.
 */
#include "fi_shim.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct rg_fi_progress_slot g_prog_none;
struct rg_fi_progress_slot *g_prog = &g_prog_none;
static struct rg_fi_progress_v1 *g_page;

/* The page mapped once per image: a forked child shares its parent's mapping (MAP_SHARED)
 * and only takes a slot of its own. */
static struct rg_fi_progress_v1 *fi_progress_map(void)
{
    const char *path = getenv("RG_FI_PROGRESS");
    if (!path || !*path)
        return NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat sb;
    void *m = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_size >= (off_t)sizeof(struct rg_fi_progress_v1))
        m = mmap(NULL, sizeof(struct rg_fi_progress_v1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    struct rg_fi_progress_v1 *p = m;
    if (p->magic != RG_FI_PROGRESS_MAGIC || p->version != RG_FI_PROGRESS_VERSION ||
        p->size != sizeof(*p) || p->nslots != RG_FI_PROGRESS_SLOTS) {
        munmap(m, sizeof(*p));
        return NULL;
    }
    return p;
}

void fi_progress_open(bool remap)
{
    g_prog_none = (struct rg_fi_progress_slot){0};
    g_prog = &g_prog_none;
    if (remap) {
        if (g_page)
            munmap(g_page, sizeof(*g_page));
        g_page = fi_progress_map();
    }
    if (!g_page)
        return;
    int64_t me = (int64_t)getpid();
    for (int i = 0; i < RG_FI_PROGRESS_SLOTS; i++) {
        int64_t free_pid = 0;
        struct rg_fi_progress_slot *s = &g_page->slot[i];
        if (atomic_compare_exchange_strong(&s->pid, &free_pid, me)) {
            g_prog = s;
            return;
        }
    }
    atomic_fetch_add(&g_page->full, 1);
}
