/* HTML escaping: the one place run data becomes page text. */
#include "html.h"
#include "utf8.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A byte that is not text: "\xNN" in a mark the stylesheet makes visible. */
static void mark_byte(FILE *f, unsigned char c, const char *why) {
  fprintf(f, "<span class=\"bad\" title=\"%s\">\\x%02X</span>", why, c);
}

void sbh_text_n(FILE *f, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&#39;", f); break;
      case '\n':
      case '\t': fputc(c, f); break;
      default:
        if (c < 0x20 || c == 0x7f) mark_byte(f, c, "control character");
        else fputc(c, f);
      }
      i++;
      continue;
    }
    size_t len = sbu_utf8_seq(p + i, n - i);
    if (!len) { /* not UTF-8: the byte itself, shown */
      mark_byte(f, c, "not UTF-8");
      i++;
      continue;
    }
    /* C1 controls (U+0080..U+009F) are well-formed but invisible */
    if (len == 2 && c == 0xc2 && p[i + 1] < 0xa0) fprintf(f, "<span class=\"bad\" title=\"control character\">\\u%04X</span>", p[i + 1]);
    else fwrite(p + i, 1, len, f);
    i += len;
  }
}

void sbh_text(FILE *f, const char *s) {
  if (!s) s = "-";
  sbh_text_n(f, s, strlen(s));
}

void sbh_textf(FILE *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *buf = NULL;
  int n = vasprintf(&buf, fmt, ap);
  va_end(ap);
  if (n >= 0) sbh_text_n(f, buf, (size_t)n);
  free(buf);
}

void sbh_elem(FILE *f, const char *tag, const char *cls, const char *text) {
  if (cls) fprintf(f, "<%s class=\"%s\">", tag, cls);
  else fprintf(f, "<%s>", tag);
  sbh_text(f, text);
  fprintf(f, "</%s>", tag);
}

void sbh_id(char *out, size_t n, const char *subset, size_t index) {
  char buf[64];
  size_t k = 0;
  for (const char *p = subset; *p && k + 1 < sizeof buf; p++)
    buf[k++] = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '-';
  buf[k] = 0;
  snprintf(out, n, "item-%s-%zu", buf, index);
}
