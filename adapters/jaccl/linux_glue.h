/* SPDX-License-Identifier: MIT */
/*
 * Force-included (-include) into every JACCL source this adapter builds on Linux, so that
 * JACCL's own files stay untouched:
 *
 * - JACCL asks the OS for RDMA support with clang's Apple-only __builtin_available(macOS 26.3,
 *   ...); Linux has had verbs all along, so here the question is always answered yes.
 * - <cstring>, which mesh_impl.h uses without including (Apple's libc++ pulls it in
 *   transitively; libstdc++ does not); <optional>, which jaccl.h up to mlx 61b5ff8e2 uses
 *   (Config::from_env) without including, for the same reason.
 *
 * Its other Apple dependency, dlopen("librdma.dylib"), is met without touching a source: the
 * adapter's directory holds a librdma.dylib symlink to libibverbs.so.1, and the adapter's
 * DT_RPATH ($ORIGIN, --disable-new-dtags) is where that dlopen looks.
 */
#ifndef RG_JACCL_LINUX_GLUE_H
#define RG_JACCL_LINUX_GLUE_H

#define __builtin_available(...) 1

/* mesh_impl.h calls std::memcpy without <cstring> (Apple's libc++ brings it in anyway). */
#ifdef __cplusplus
#include <cstring>
#include <optional>
#endif

#endif
