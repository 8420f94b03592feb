#include "apps/doctor_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-doctor", argc, argv, ctxkit::apps::run_doctor);
}
