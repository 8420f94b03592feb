#include "apps/doctor_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-doctor", argc, argv, ctxkit::run_doctor);
}
