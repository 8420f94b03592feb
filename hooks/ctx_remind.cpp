#include "apps/remind_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-remind", argc, argv, 1, ctxkit::run_remind);
}
