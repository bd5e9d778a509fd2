/* common/python_name.c: a CPython interpreter by its name. */
#include "../check.h"
#include "python_name.h"

int main(void) {
  CHECK(sbu_is_python_name("python"));
  CHECK(sbu_is_python_name("python3"));
  CHECK(sbu_is_python_name("/usr/bin/python3.11"));
  CHECK(sbu_is_python_name("/root/.pyenv/versions/3.8.18/bin/python3.8"));
  CHECK(!sbu_is_python_name("/usr/bin/python3-config"));
  CHECK(!sbu_is_python_name("pypy3"));
  CHECK(!sbu_is_python_name("/usr/bin/ipython3"));
  CHECK(!sbu_is_python_name("/opt/python3/bin/node")); /* the last component only */
  CHECK(!sbu_is_python_name(""));
  return check_exit();
}
