// name_resolution.cpp: the pin declared in name_resolution.hpp; how it is taken differs by major
// (pg/compat.hpp).
#include "pg/name_resolution.hpp"

#include "pg/compat.hpp"

namespace pgjq {

int pin_name_resolution()
{
    return compat::pin_search_path();
}

void unpin_name_resolution(int token)
{
    compat::unpin_search_path(token);
}

}  // namespace pgjq
