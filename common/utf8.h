/* The one UTF-8 checker (RFC 3629 well-formedness). Prefix sbu_. */
#ifndef SURGEBOX_UTF8_H
#define SURGEBOX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (1..4) of the well-formed UTF-8 sequence starting at s (n bytes
 * available), or 0 when none starts there: a stray continuation byte, an
 * overlong form (C0, C1, E0 80.., F0 80..), a surrogate (U+D800..U+DFFF), a
 * code point above U+10FFFF, a sequence cut short. NUL is refused too (it
 * would cut C strings short downstream). */
size_t sbu_utf8_seq(const unsigned char *s, size_t n);
/* Whether all n bytes are well-formed UTF-8 without NUL. */
bool sbu_utf8_valid(const void *s, size_t n);

#endif
