// test_main.cpp: the Boost.Test module of the client tests (one per binary); the cases are in test_*.cpp.
#define BOOST_TEST_MODULE pgjq_client
#include <boost/test/unit_test.hpp>
