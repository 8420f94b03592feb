#include "apps/doctor_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-doctor", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_doctor);
}
