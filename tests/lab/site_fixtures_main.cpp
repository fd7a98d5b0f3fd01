// lab_site_fixtures DIR: writes the results page's fixture sittings
// (site_fixture.hpp) under DIR, for the browser tests (tests/site/).
#include <cstdio>
#include <exception>

#include "site_fixture.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lab_site_fixtures RESULTS_DIR\n");
    return 1;
  }
  try {
    kite::lab::test::write_site_fixtures(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lab_site_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}
