#pragma once
#include "store/thing.hpp"
