/* Unit test of mempoll.c's /proc text parsing (the kB figures it adds up).
 * The texts are shaped like the kernel's, values written by hand. */
#include "check.h"
#include "proc_internal.h"

static const char *const upper[] = {"RssAnon", "RssShmem", "VmSwap", NULL};
static const char *const pss[] = {"Pss_Anon", "Pss_Shmem", "SwapPss", NULL};

int main(void) {
  int found;
  const char *status = "Name:\tRssAnon: 999999 kB\\n\n"  /* an escaped comm never starts a line */
                       "VmRSS:\t  131072 kB\n"
                       "RssAnon:\t    1000 kB\n"
                       "RssFile:\t    5000 kB\n"
                       "RssShmem:\t  120000 kB\n"
                       "VmSwap:\t       24 kB\n"
                       "Threads:\t1\n";
  CHECK(sb_mempoll_kb(status, upper, &found) == 121024);
  CHECK(found == 3);

  const char *rollup = "5563e49bf000-7fffdcb36000 ---p 00000000 00:00 0    [rollup]\n"
                       "Rss:                4112 kB\n"
                       "Pss:                 846 kB\n"
                       "Pss_Dirty:           577 kB\n"
                       "Pss_Anon:            577 kB\n"
                       "Pss_File:            269 kB\n"
                       "Pss_Shmem:            10 kB\n"
                       "SwapPss:               3 kB\n";
  CHECK(sb_mempoll_kb(rollup, pss, &found) == 590); /* not Pss, Pss_Dirty or Pss_File */
  CHECK(found == 3);

  /* A zombie's smaps_rollup is empty; a truncated line still parses. */
  CHECK(sb_mempoll_kb("", pss, &found) == 0);
  CHECK(found == 0);
  CHECK(sb_mempoll_kb("Pss_Anon: 7", pss, &found) == 7);
  CHECK(found == 1);
  return check_exit();
}
