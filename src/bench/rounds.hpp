// rounds.hpp: runs a scenario for pgjq and the recipe in alternated rounds of one run each, instead of all of
// pgjq's runs and then all of the recipe's, and folds the rounds' figures into one summary per figure.
#pragma once

#include <vector>

#include "scenarios.hpp"

namespace pgjq::bench
{

using scenario_fn = void (*)(driver &, const config &, results &);

// Each round runs the scenario once for every driver, the first driver first in rounds 1, 3, ... and last
// in rounds 2, 4, ..., so that a drift in the machine's load (this machine is shared) falls on both sides
// of a ratio instead of on whichever system ran second. Only for scenarios whose every figure is one value
// per run. A round that throws for a driver is noted in r and leaves that driver's figures with fewer
// runs; so does a round whose server CPU could not be read (the figure's runs column says how many).
// Runs the scenario once for d; an exception is printed and noted in r (`round`: 0, or the round it failed in).
void run_guarded(const char *name, scenario_fn run, driver &d, const config &c, results &run_into, results &r,
                 int round = 0);

void run_in_rounds(const char *name, scenario_fn run, const std::vector<driver *> &drivers, const config &c,
                   results &r);

} // namespace pgjq::bench
