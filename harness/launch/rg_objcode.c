/* SPDX-License-Identifier: MIT */
/*
 * An object's code as a digest (rg_launch.h). A sweep's call sites are offsets into the objects
 * its counting run loaded; a plan keeps each object's digest, so a sweep given the plan on
 * another build (a shard's machine, a transport rebuilt since) can say that its site points
 * aim at code that is no longer there, instead of leaving them to read "not fired" with no
 * reason given. The digest covers the executable sections only (their addresses, sizes and
 * bytes): debug information, symbol tables and build ids stay out of it, so one source built
 * twice the same way has one digest -- in another directory too, where the build names its
 * sources by relative paths (this project's does) or maps them (-ffile-prefix-map): an absolute
 * path in __FILE__ or an assert's text moves the data the code addresses, and so the code.
 */
#include "launch/rg_launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rg_obj_code(const char *path, char out[17], char *err, size_t errlen)
{
    out[0] = '\0';
    /* A plan names the path: a FIFO or a device would block or never end. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    const uint64_t size = (uint64_t)sb.st_size;
    Elf64_Ehdr eh;
    uint64_t h = RG_FNV_START, hashed = 0;
    int sections = 0;
    const char *bad = NULL;
    if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        bad = "not an ELF object";
    else if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
        bad = "not a 64-bit little-endian ELF object";
    else if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
        bad = "no section headers";
    else if (eh.e_shoff > size || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
        bad = "its section headers past the end";
    for (unsigned i = 0; !bad && i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        if (fseek(f, (long)(eh.e_shoff + (uint64_t)i * sizeof(sh)), SEEK_SET) != 0 ||
            fread(&sh, sizeof(sh), 1, f) != 1) {
            bad = "a section header cut short";
            break;
        }
        if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
            continue;
        /* Real code sections lie inside the file and do not overlap: more bytes than the file
         * holds is no object a linker wrote. */
        if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset || sh.sh_size > size - hashed) {
            bad = "a code section past the end";
            break;
        }
        h = rg_fnv(h, &sh.sh_addr, sizeof(sh.sh_addr));
        h = rg_fnv(h, &sh.sh_size, sizeof(sh.sh_size));
        if (fseek(f, (long)sh.sh_offset, SEEK_SET) != 0) {
            bad = "a code section past the end";
            break;
        }
        uint8_t buf[65536];
        for (uint64_t left = sh.sh_size; left && !bad;) {
            size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf);
            if (fread(buf, 1, want, f) != want) {
                bad = "a code section cut short";
                break;
            }
            h = rg_fnv(h, buf, want);
            left -= want;
        }
        hashed += sh.sh_size;
        sections++;
    }
    fclose(f);
    if (!bad && !sections)
        bad = "no code section";
    if (bad) {
        snprintf(err, errlen, "%s: %s", path, bad);
        return -1;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return 0;
}
