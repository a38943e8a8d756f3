// Configure's widgets for the run configuration's plain fields (ValueField, config.h): a
// checkbox for a flag, a number box for a number, the field's help on hover and its error
// under it. Configure draws each section's fields where the section sits in its form.
#pragma once

#include "lmprof/engine/config.h"

#include <map>
#include <string>
#include <vector>

namespace lmprof::ui {

// Draws the fields of `section`, in their declared order; returns the keys drawn.
std::vector<std::string> valueInputs(engine::ValueField::Section section, engine::RunConfig& c,
                                     const std::map<std::string, std::string>& errors);

// A field's error in red under its widget, when it has one (Configure's validation).
void fieldError(const std::map<std::string, std::string>& errors, const char* field);

} // namespace lmprof::ui
