#include "apps/settings_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-settings", argc, argv, ctxkit::run_settings);
}
