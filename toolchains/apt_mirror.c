/* The Debian mirror this machine's apt already uses, for debootstrap when
 * neither `--mirror` nor the profile definition names one: the first URI of
 * a "deb" source that is not a security archive, from
 * /etc/apt/sources.list.d/ *.sources (deb822 "URIs:") and then the one-line
 * format of /etc/apt/sources.list and sources.list.d/ *.list. */
#include "profile_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static bool usable(const char *uri) {
  return (strncmp(uri, "http://", 7) == 0 || strncmp(uri, "https://", 8) == 0) && !strstr(uri, "security");
}

static bool take(const char *uri, char *out, size_t n) {
  if (!usable(uri) || strlen(uri) >= n) return false;
  snprintf(out, n, "%s", uri);
  return true;
}

/* A source format: the first usable URI on one line of its file, into out. */
typedef bool line_uri(char *line, char *out, size_t n);

/* deb822: a stanza's "URIs:" field (space-separated) */
static bool uris_field(char *line, char *out, size_t n) {
  if (strncasecmp(line, "URIs:", 5) != 0) return false;
  for (char *s = line + 5, *tok; (tok = strsep(&s, " \t\r\n"));)
    if (*tok && take(tok, out, n)) return true;
  return false;
}

static char *next_tok(char **s) {
  char *tok;
  while ((tok = strsep(s, " \t\r\n")) && !*tok) {
  }
  return tok;
}

/* one-line: "deb [options] URI suite components" */
static bool deb_line(char *line, char *out, size_t n) {
  char *s = line, *tok = next_tok(&s);
  if (!tok || strcmp(tok, "deb") != 0) return false;
  tok = next_tok(&s);
  if (tok && *tok == '[') { /* [options]: the URI follows the closing bracket */
    while (tok && !strchr(tok, ']')) tok = next_tok(&s);
    tok = tok ? next_tok(&s) : NULL;
  }
  return tok && take(tok, out, n);
}

/* The first line of the file at path that has a usable URI in its format. */
static bool from_file(const char *path, line_uri *uri_of, char *out, size_t n) {
  FILE *f = fopen(path, "re");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) found = uri_of(line, out, n);
  fclose(f);
  return found;
}

static bool from_dir(const char *dir, const char *suffix, line_uri *uri_of, char *out, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *e;
  bool found = false;
  size_t sl = strlen(suffix);
  while (!found && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    found = from_file(path, uri_of, out, n);
  }
  closedir(d);
  return found;
}

bool sbf_apt_mirror(const char *etc_apt, char *out, size_t n) {
  char dir[4096], list[4096];
  snprintf(dir, sizeof dir, "%s/sources.list.d", etc_apt);
  snprintf(list, sizeof list, "%s/sources.list", etc_apt);
  return from_dir(dir, ".sources", uris_field, out, n) || from_file(list, deb_line, out, n) ||
         from_dir(dir, ".list", deb_line, out, n);
}
