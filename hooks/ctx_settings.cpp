#include "apps/settings_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-settings", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_settings);
}
