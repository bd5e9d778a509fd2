/* surgebox-profile: `surgebox profile ...` as a program of its own, for the
 * profile tests (and until the surgebox client dispatches "profile"):
 *   surgebox-profile create|list|show|delete|verify ... */
#include "profile.h"

int main(int argc, char **argv) {
  argv[0] = "profile";
  return sbf_profile_main(argc, argv);
}
