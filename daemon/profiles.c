/* Profiles in the daemon: a job may run in another root file system (e.g.
 * SURGE's own Debian 11 toolchains) instead of the host's. Each profile is
 * opened (manifest checked, quick hash verified) and its toolchains detected
 * inside its root the first time a job names it; "host" is the daemon's own
 * registry. SIGHUP forgets them all (they load again on demand). */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sbd_profile {
  sbf_profile prof;
  sbt_registry reg;
  char hash[80];
  sbd_profile *next;
};

static const char *profiles_dir(const sbd_server *srv) {
  return srv->cfg->profiles_dir ? srv->cfg->profiles_dir : sbf_default_dir();
}

sbd_profile *sbd_profile_get(sbd_server *srv, const char *name, char *err, size_t n) {
  if (!name || !strcmp(name, "host")) return NULL;
  for (sbd_profile *p = srv->profiles; p; p = p->next)
    if (!strcmp(p->prof.name, name)) return p;
  sbd_profile *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(err, n, "out of memory");
    return NULL;
  }
  char perr[SBF_ERR_MAX] = "", dir[4096], cache_dir[4096], cache_file[4300];
  if (sbf_profile_open(profiles_dir(srv), name, &p->prof, perr, sizeof perr) < 0) {
    /* perr names the directory and, where creating it helps, the command */
    snprintf(err, n, "unknown profile \"%s\": %s", name, perr);
    free(p);
    return NULL;
  }
  snprintf(p->hash, sizeof p->hash, "%s", p->prof.content_hash ? p->prof.content_hash : "");
  char terr[SBT_ERR_MAX] = "";
  if (srv->cfg->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", srv->cfg->cache_dir);
  else sbd_default_cache_dir(cache_dir, sizeof cache_dir);
  snprintf(cache_file, sizeof cache_file, "%s/toolchains-%s.json", cache_dir, name);
  if (sbf_profile_toolchains_dir(&p->prof, dir, sizeof dir) < 0 || sbt_registry_load(&p->reg, dir, terr) < 0 ||
      sbt_registry_detect_in_root(&p->reg, sbf_profile_root(&p->prof), cache_file, terr) < 0) {
    snprintf(err, n, "profile \"%s\": toolchains: %s", name, terr);
    sbf_profile_close(&p->prof);
    free(p);
    return NULL;
  }
  sbd_log(srv, "info", "profile %s (%s): %zu toolchains detected inside in %.2fs", name, p->hash, p->reg.n_tcs,
          p->reg.detect_s);
  p->next = srv->profiles;
  srv->profiles = p;
  return p;
}

/* Does profile dir/name package the toolchain (a package of that name in its
 * manifest's package_versions, as g++-9 or julia)? Only the manifest is read:
 * this is a hint for a missing toolchain, the job still opens the profile. */
static bool manifest_packages(const char *dir, const char *name, const char *toolchain) {
  char path[4400];
  if ((size_t)snprintf(path, sizeof path, "%s/%s/manifest.json", dir, name) >= sizeof path) return false;
  json_object *m = json_object_from_file(path), *pv = NULL;
  bool has = m && json_object_object_get_ex(m, "package_versions", &pv) && json_object_is_type(pv, json_type_object) &&
             json_object_object_get_ex(pv, toolchain, NULL);
  json_object_put(m);
  return has;
}

int sbd_profile_offering(sbd_server *srv, const char *toolchain, const char *except, char *out, size_t n) {
  DIR *d = opendir(profiles_dir(srv));
  if (!d) return -1;
  char best[SBF_NAME_MAX + 1] = "";
  for (struct dirent *e; (e = readdir(d));) /* the first by name, so the answer does not depend on readdir's order */
    if (sbf_name_ok(e->d_name) && (!except || strcmp(e->d_name, except)) && (!best[0] || strcmp(e->d_name, best) < 0) &&
        manifest_packages(profiles_dir(srv), e->d_name, toolchain))
      snprintf(best, sizeof best, "%s", e->d_name);
  closedir(d);
  if (!best[0]) return -1;
  snprintf(out, n, "%s", best);
  return 0;
}

const sbt_registry *sbd_profile_registry(sbd_server *srv, const sbd_profile *p) {
  if (p) return &p->reg;
  return srv->have_toolchains ? &srv->toolchains : NULL;
}

const char *sbd_profile_root(const sbd_profile *p) { return p ? sbf_profile_root(&p->prof) : NULL; }

json_object *sbd_profile_identity(const sbd_profile *p) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "name", json_object_new_string(p ? p->prof.name : "host"));
  json_object_object_add(o, "manifest_hash", p && p->hash[0] ? json_object_new_string(p->hash) : NULL);
  return o;
}

void sbd_profiles_forget(sbd_server *srv) {
  while (srv->profiles) {
    sbd_profile *p = srv->profiles;
    srv->profiles = p->next;
    sbt_registry_free(&p->reg);
    sbf_profile_close(&p->prof);
    free(p);
  }
}
