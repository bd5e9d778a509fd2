/* Where an installed binary's data is (runtime_paths.c says how). */
#include "runtime_paths.h"
#include "toolchain.h"

const char *sbt_installed_dir(const char *sub, char *buf, size_t cap) { return sbu_installed_dir(sub, buf, cap); }
