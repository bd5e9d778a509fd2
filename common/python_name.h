/* Whether a program is a CPython interpreter by its name: python, python3,
 * python3.11 (a path's last component). Prefix sbu_. */
#ifndef SURGEBOX_PYTHON_NAME_H
#define SURGEBOX_PYTHON_NAME_H

#include <stdbool.h>

bool sbu_is_python_name(const char *prog);

#endif
