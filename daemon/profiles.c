/* Profiles in the daemon: a job may run in another root file system (e.g.
 * SURGE's own Debian 11 toolchains) instead of the host's. Each profile is
 * opened (manifest checked, quick hash verified) and its toolchains detected
 * inside its root the first time a job names it; "host" is the daemon's own
 * registry. SIGHUP forgets them all (they load again on demand).
 *
 * A load takes seconds (a hash of the root, a probe per toolchain), so it
 * runs on libuv's thread pool, never on the loop (issue 39): the worker
 * touches only its own sbd_load (copies of the directory and cache paths
 * made on the loop) and the sbf_/sbt_ calls below, which keep no static
 * state a second thread shares (sbf_defs_dir's buffer is per thread). The
 * requests that name a profile being loaded wait on its load ({fn, arg}, in
 * the order they came) and are called back from the loop when it ends. */
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

typedef struct sbd_waiter {
  sbd_profile_wait wait;
  struct sbd_waiter *next;
} sbd_waiter;

/* One profile being loaded: the worker's inputs and outputs, and who waits. */
struct sbd_load {
  uv_work_t work;
  sbd_server *srv;
  char name[SBF_NAME_MAX + 1];
  char dir[4096], cache_file[4300]; /* copied on the loop: the worker reads no srv state */
  uint64_t gen;                     /* srv->profiles_gen when it started: a SIGHUP since makes it stale */
  sbd_profile *p;                   /* the worker's result, NULL on error */
  char err[512];
  sbd_waiter *head, *tail;
  bool ended;                       /* on the loop: its waiters are being called */
  sbd_load *next;
};

static const char *profiles_dir(const sbd_server *srv) {
  return srv->cfg->profiles_dir ? srv->cfg->profiles_dir : sbf_default_dir();
}

/* On the pool's thread: open, verify and detect into the load's own profile. */
static void load_work(uv_work_t *w) {
  sbd_load *l = w->data;
  sbd_profile *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(l->err, sizeof l->err, "out of memory");
    return;
  }
  char perr[SBF_ERR_MAX] = "", dir[4096];
  if (sbf_profile_open(l->dir, l->name, &p->prof, perr, sizeof perr) < 0) {
    /* perr names the directory and, where creating it helps, the command */
    snprintf(l->err, sizeof l->err, "unknown profile \"%s\": %s", l->name, perr);
    free(p);
    return;
  }
  snprintf(p->hash, sizeof p->hash, "%s", p->prof.content_hash ? p->prof.content_hash : "");
  char terr[SBT_ERR_MAX] = "";
  if (sbf_profile_toolchains_dir(&p->prof, dir, sizeof dir) < 0 || sbt_registry_load(&p->reg, dir, terr) < 0 ||
      sbt_registry_detect_in_root(&p->reg, sbf_profile_root(&p->prof), l->cache_file, terr) < 0) {
    snprintf(l->err, sizeof l->err, "profile \"%s\": toolchains: %s", l->name, terr);
    sbt_registry_free(&p->reg);
    sbf_profile_close(&p->prof);
    free(p);
    return;
  }
  l->p = p;
}

static void profile_free(sbd_profile *p) {
  sbt_registry_free(&p->reg);
  sbf_profile_close(&p->prof);
  free(p);
}

/* On the loop: the load ended (or was cancelled before it started). Its
 * waiters are called in order, then the profile is kept unless a SIGHUP came
 * meanwhile (its waiters asked before it; the next request loads afresh). */
static void load_done(uv_work_t *w, int status) {
  sbd_load *l = w->data;
  sbd_server *srv = l->srv;
  l->ended = true; /* joined by no one now; still listed while its waiters run (forget_waiter finds them) */
  if (status < 0 && !l->err[0]) snprintf(l->err, sizeof l->err, "profile \"%s\": load cancelled", l->name);
  if (l->p)
    sbd_log(srv, "info", "profile %s (%s): %zu toolchains detected inside in %.2fs", l->name, l->p->hash,
            l->p->reg.n_tcs, l->p->reg.detect_s);
  else
    sbd_log(srv, "warn", "profile %s: %s", l->name, l->err);
  while (l->head) { /* a waiter may forget others (its connection closed, their jobs freed): one at a time */
    sbd_waiter *wt = l->head;
    l->head = wt->next;
    if (!l->head) l->tail = NULL;
    sbd_profile_wait wait = wt->wait;
    free(wt);
    wait.fn(wait.arg, l->p, l->p ? NULL : l->err);
  }
  for (sbd_load **pp = &srv->loads; *pp; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      break;
    }
  if (l->p && l->gen == srv->profiles_gen && !srv->draining) {
    l->p->next = srv->profiles;
    srv->profiles = l->p;
  } else if (l->p) {
    profile_free(l->p);
  }
  free(l);
}

sbd_profile_state sbd_profile_want(sbd_server *srv, const char *name, sbd_profile_wait wait, sbd_profile **out,
                                   char *err, size_t n) {
  *out = NULL;
  if (!name || !strcmp(name, "host")) return SBD_PROFILE_READY;
  for (sbd_profile *p = srv->profiles; p; p = p->next)
    if (!strcmp(p->prof.name, name)) {
      *out = p;
      return SBD_PROFILE_READY;
    }
  if (!sbf_name_ok(name)) { /* as sbf_profile_open says it, without a thread */
    snprintf(err, n, "unknown profile \"%s\": bad profile name \"%s\" (letters, digits and ._+- only, at most %d)",
             name, name, SBF_NAME_MAX);
    return SBD_PROFILE_ERROR;
  }
  sbd_load *l = NULL;
  for (l = srv->loads; l; l = l->next)
    if (!l->ended && l->gen == srv->profiles_gen && !strcmp(l->name, name)) break; /* joins it: never a second load */
  bool start = !l;
  if (start && !(l = calloc(1, sizeof *l))) {
    snprintf(err, n, "out of memory");
    return SBD_PROFILE_ERROR;
  }
  sbd_waiter *wt = calloc(1, sizeof *wt);
  if (!wt) {
    if (start) free(l);
    snprintf(err, n, "out of memory");
    return SBD_PROFILE_ERROR;
  }
  wt->wait = wait;
  if (start) {
    char cache_dir[4096];
    l->srv = srv;
    l->work.data = l;
    l->gen = srv->profiles_gen;
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->dir, sizeof l->dir, "%s", profiles_dir(srv));
    if (srv->cfg->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", srv->cfg->cache_dir);
    else sbd_default_cache_dir(cache_dir, sizeof cache_dir);
    snprintf(l->cache_file, sizeof l->cache_file, "%s/toolchains-%s.json", cache_dir, name);
    if (uv_queue_work(&srv->loop, &l->work, load_work, load_done) < 0) {
      free(wt);
      free(l);
      snprintf(err, n, "profile \"%s\": cannot start its load", name);
      return SBD_PROFILE_ERROR;
    }
    l->next = srv->loads;
    srv->loads = l;
    sbd_log(srv, "info", "profile %s: loading (requests naming it wait; others go on)", name);
  }
  if (l->tail) l->tail->next = wt;
  else l->head = wt;
  l->tail = wt;
  return SBD_PROFILE_LOADING;
}

bool sbd_profile_forget_waiter(sbd_server *srv, const void *arg) {
  for (sbd_load *l = srv->loads; l; l = l->next)
    for (sbd_waiter **pp = &l->head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next)
      if ((*pp)->wait.arg == arg) {
        sbd_waiter *wt = *pp;
        *pp = wt->next;
        if (l->tail == wt) l->tail = prev;
        free(wt);
        return true;
      }
  return false;
}

void sbd_profiles_drain(sbd_server *srv) {
  for (sbd_load *l = srv->loads; l; l = l->next) {
    sbd_log(srv, "info", "profile %s: still loading; its waiting requests answered, the exit waits for the load",
            l->name);
    while (l->head) {
      sbd_waiter *wt = l->head;
      l->head = wt->next;
      if (!l->head) l->tail = NULL;
      sbd_profile_wait wait = wt->wait;
      free(wt);
      wait.fn(wait.arg, NULL, "the daemon is shutting down");
    }
  }
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

/* SIGHUP and the exit: the loaded profiles go; a load in flight keeps its own
 * (the worker's) and, stale now, serves only the requests already waiting. */
void sbd_profiles_forget(sbd_server *srv) {
  srv->profiles_gen++;
  while (srv->profiles) {
    sbd_profile *p = srv->profiles;
    srv->profiles = p->next;
    profile_free(p);
  }
}
