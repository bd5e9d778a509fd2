/* Unit tests of the runner's pure helpers: output capture, UTF-8, limit
 * defaults, cgroup file parsing, seccomp policy building, safe removal. */
#include "check.h"
#include "internal.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/stat.h>

static void test_buf_cap(void) {
  sb_buf b = {0};
  CHECK(!sb_buf_append(&b, "hello", 5, 8));
  CHECK(sb_buf_append(&b, "world", 5, 8)); /* 3 bytes fit, 2 discarded */
  CHECK(b.len == 8);
  CHECK(b.truncated);
  CHECK(memcmp(b.data, "hellowor", 8) == 0);
  CHECK(sb_buf_append(&b, "x", 1, 8));
  CHECK(b.len == 8);
  free(b.data);
  /* growth across many small appends keeps every byte */
  sb_buf g = {0};
  for (int i = 0; i < 10000; i++) sb_buf_append(&g, "ab", 2, 1 << 20);
  CHECK(g.len == 20000 && !g.truncated && g.data[19999] == 'b' && g.data[20000] == '\0');
  free(g.data);
}

static void test_utf8(void) {
  bool lossy;
  char *s = sb_utf8_sanitize((const unsigned char *)"caf\xc3\xa9 \xe2\x82\xac", 9, &lossy);
  CHECK_STR(s, "caf\xc3\xa9 \xe2\x82\xac");
  CHECK(!lossy);
  free(s);
  /* invalid byte, overlong '/', a surrogate, a truncated sequence, and NUL */
  const unsigned char bad[] = {'a', 0xff, 'b', 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x00, 0xe2, 0x82};
  s = sb_utf8_sanitize(bad, sizeof bad, &lossy);
  CHECK(lossy);
  CHECK_STR(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  free(s);
  /* 4-byte sequence (U+1F600) is fine; above U+10FFFF is not */
  s = sb_utf8_sanitize((const unsigned char *)"\xf0\x9f\x98\x80", 4, &lossy);
  CHECK(!lossy && strcmp(s, "\xf0\x9f\x98\x80") == 0);
  free(s);
  s = sb_utf8_sanitize((const unsigned char *)"\xf4\x90\x80\x80", 4, &lossy);
  CHECK(lossy);
  free(s);
  s = sb_utf8_sanitize(NULL, 0, &lossy);
  CHECK_STR(s, "");
  free(s);
}

static void test_limits_and_names(void) {
  sb_limits l;
  sb_limits_default(&l);
  CHECK(l.wall_time_s == 30 && l.cpu_time_s == 30);
  CHECK(l.memory_mib == 2048 && l.pids == 128);
  CHECK(l.output_bytes == 8u << 20 && l.file_size_mib == 256 && l.tmp_mib == 512 && l.open_files == 256);
  sb_cgroup_kind k;
  CHECK(sb_cgroup_kind_parse("v1", &k) == 0 && k == SB_CGROUP_V1);
  CHECK(sb_cgroup_kind_parse("none", &k) == 0 && k == SB_CGROUP_NONE);
  CHECK(sb_cgroup_kind_parse("v3", &k) < 0);
  CHECK_STR(sb_status_name(SB_MEMORY_LIMIT), "memory_limit");
  CHECK_STR(sb_status_name(SB_OUTPUT_LIMIT), "output_limit");
}

static void test_keyed(void) {
  char dir[] = "/tmp/sbtest-keyedXXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/memory.oom_control", dir);
  FILE *f = fopen(path, "w");
  fputs("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", f);
  fclose(f);
  bool found;
  CHECK(sb_cg_read_keyed(dir, "memory.oom_control", "oom_kill", &found) == 3 && found);
  CHECK(sb_cg_read_keyed(dir, "memory.oom_control", "under_oom", &found) == 0 && found);
  CHECK(sb_cg_read_keyed(dir, "memory.oom_control", "oom", &found) == 0 && !found);
  CHECK(sb_cg_read_keyed(dir, "absent", "x", &found) == 0 && !found);
  sb_rm_rf(dir);
}

static void test_seccomp_build(void) {
  sb_bpf b;
  char err[SB_ERR_MAX] = "";
  CHECK(sb_seccomp_build(NULL, NULL, NULL, &b, err) == 0);
  CHECK(b.len > 20 && b.insns != NULL);
  unsigned short base = b.len;
  sb_seccomp_free(&b);
  /* the policy is data: allowing ptrace removes a rule, denying more adds */
  const char *const allow[] = {"ptrace", NULL};
  CHECK(sb_seccomp_build(NULL, allow, NULL, &b, err) == 0);
  CHECK(b.len < base);
  sb_seccomp_free(&b);
  const char *const deny[] = {"chdir", "getcwd", "no_such_syscall_xyz", NULL};
  CHECK(sb_seccomp_build(deny, NULL, NULL, &b, err) == 0);
  CHECK(b.len > base);
  sb_seccomp_free(&b);
  bool has_ptrace = false, has_socket = false;
  for (const char *const *p = sb_seccomp_default_deny; *p; p++) {
    has_ptrace |= strcmp(*p, "ptrace") == 0;
    has_socket |= strcmp(*p, "socket") == 0;
  }
  CHECK(has_ptrace);
  CHECK(!has_socket); /* socket is conditional (AF_UNIX allowed), not listed */
}

static void test_rm_rf_stays_inside(void) {
  char outside[] = "/tmp/sbtest-outsideXXXXXX", dir[] = "/tmp/sbtest-rmXXXXXX";
  CHECK(mkdtemp(outside) && mkdtemp(dir));
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/keep", outside);
  close(open(p, O_CREAT | O_WRONLY, 0644));
  snprintf(p, sizeof p, "%s/link", dir);
  CHECK(symlink(outside, p) == 0);
  snprintf(p, sizeof p, "%s/sub/deeper", dir);
  CHECK(sb_mkdir_p(p, 0755) == 0);
  snprintf(p, sizeof p, "%s/sub", dir);
  chmod(p, 0); /* a program may leave this behind */
  CHECK(sb_rm_rf(dir) == 0);
  CHECK(access(dir, F_OK) != 0);
  snprintf(p, sizeof p, "%s/keep", outside);
  CHECK(access(p, F_OK) == 0); /* the symlink was removed, not followed */
  CHECK(sb_rm_rf(outside) == 0);
  CHECK(sb_rm_rf("/tmp/sbtest-does-not-exist") == 0);
}

int main(void) {
  test_buf_cap();
  test_utf8();
  test_limits_and_names();
  test_keyed();
  test_seccomp_build();
  test_rm_rf_stays_inside();
  return check_exit();
}
