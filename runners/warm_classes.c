/* libsbwarm.so: whether a program changed a class of the zygote's objects
 * (sbzygote_body.py _old_changed, whose Python walk this is, for the short
 * exit): each class's __mro__ and the __del__ in its own dict, compared
 * with what they were in the zygote.
 *
 * Why C: the walk in Python touches every class object, its __mro__ and
 * its __del__ (a reference count each), and in a forked child each touch of
 * a page the zygote shares copies it: about 60 faults at a program's end,
 * where this reads the same words and writes none.
 *
 * The type object's words are read at offsets the zygote found and checked
 * on every class it hands over (sbzygote_body.py _old_in_c: where they
 * disagree, the Python walk stays). Called through ctypes.PyDLL, with the
 * GIL held: the dictionary lookup may run a key's __eq__. */
#include "internal.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uintptr_t type, mro, dict, del; /* del 0: none in its dict */
} old_class;

static old_class *old;
static size_t n_old, mro_at, dict_at;
static void *del_key; /* the interned "__del__" */
static void *(*dict_get)(void *, void *); /* PyDict_GetItemWithError: borrowed, no reference taken */
static void *(*error_occurred)(void);      /* PyErr_Occurred */

static uintptr_t word_at(uintptr_t type, size_t at) {
  uintptr_t w;
  memcpy(&w, (const char *)type + at, sizeof w);
  return w;
}

/* Once, in the zygote: words holds n (type, mro, dict, __del__ or 0)
 * addresses; mro and dict are the offsets of tp_mro and tp_dict in a type
 * object; key the interned "__del__". 0, or -1 (no interpreter API, no
 * memory): the Python walk stays. */
SBWARM_API int sbwarm_old_set(const uintptr_t *words, size_t n, size_t mro, size_t dict, void *key) {
  *(void **)&dict_get = dlsym(RTLD_DEFAULT, "PyDict_GetItemWithError");
  *(void **)&error_occurred = dlsym(RTLD_DEFAULT, "PyErr_Occurred");
  if (!dict_get || !error_occurred || !n) return -1;
  old_class *table = calloc(n, sizeof *table);
  if (!table) return -1;
  memcpy(table, words, n * sizeof *table);
  free(old);
  old = table;
  n_old = n;
  mro_at = mro;
  dict_at = dict;
  del_key = key;
  return 0;
}

/* In the program's process: 1 when a class's __mro__ or dict is another
 * object, or its own __del__ another (or a lookup failed), else 0. */
SBWARM_API int sbwarm_old_changed(void) {
  for (size_t i = 0; i < n_old; i++) {
    const old_class *c = &old[i];
    if (word_at(c->type, mro_at) != c->mro || word_at(c->type, dict_at) != c->dict) return 1;
    void *del = dict_get((void *)c->dict, del_key);
    if ((uintptr_t)del != c->del || (!del && error_occurred())) return 1;
  }
  return 0;
}
