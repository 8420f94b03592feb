#include "apps/settings_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-settings", argc, argv, ctxkit::apps::run_settings);
}
