#include "apps/settings_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-settings", argc, argv, 1, ctxkit::run_settings);
}
