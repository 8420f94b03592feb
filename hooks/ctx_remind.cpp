#include "apps/remind_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-remind", argc, argv, ctxkit::run_remind);
}
