#include "python_name.h"

#include <string.h>

bool sbu_is_python_name(const char *prog) {
  const char *base = strrchr(prog, '/');
  base = base ? base + 1 : prog;
  if (strncmp(base, "python", 6) != 0) return false;
  for (const char *p = base + 6; *p; p++)
    if (!(*p >= '0' && *p <= '9') && *p != '.') return false;
  return true;
}
