#include "apps/remind_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-remind", argc, argv, ctxkit::apps::run_remind);
}
