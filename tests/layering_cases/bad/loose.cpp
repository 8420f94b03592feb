#include "loose.hpp"
