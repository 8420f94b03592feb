#pragma once
#include "util/helper.hpp"
