/* The Python client's modules run as commands (prefix sbc_py): `surgebox
 * trace --format` (surgebox.trace_convert) and `surgebox verify --benchmark
 * traces` (surgebox.trace_verify) call them rather than a second
 * implementation in C that could drift from the one Trace users share. */
#ifndef SURGEBOX_PYCLIENT_H
#define SURGEBOX_PYCLIENT_H
#include <stddef.h>

/* Where the package is: $SURGEBOX_PYTHON_CLIENT, else beside the installed
 * data files (share/surgebox/python), else the source tree. */
const char *sbc_py_client_dir(void);
/* python3 -m MODULE ARGS... (args NULL-terminated) with the package on
 * PYTHONPATH, stdin_text (may be NULL: ours) written to its standard input,
 * its stdout and stderr ours. Its exit status (0-255), or -1 with err when
 * python3 cannot run or died by a signal. */
int sbc_py_module(const char *module, const char *const *args, const char *stdin_text, char *err, size_t err_len);
#endif
