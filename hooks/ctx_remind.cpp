#include "apps/remind_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-remind", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_remind);
}
