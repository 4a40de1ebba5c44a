// pgjq/client.hpp: the C++ client of pgjq, a job queue inside PostgreSQL. Include this one header.
//   pgjq::connection  producers, workers and admins calling the SQL API (connection.hpp)
//   pgjq::worker      the claim/run/complete loop with handlers per job type (worker.hpp)
//   pgjq::error       exceptions keyed by SQLSTATE (error.hpp)
//   pgjq::job         jobs, options and statistics (job.hpp)
//   pgjq::workflow_builder  workflows of steps: their builders and rows (workflow.hpp)
//   pgjq::cluster     producers and workers of a cluster of nodes behind a router (cluster.hpp)
#pragma once

#include <pgjq/cluster.hpp>
#include <pgjq/connection.hpp>
#include <pgjq/error.hpp>
#include <pgjq/job.hpp>
#include <pgjq/worker.hpp>
#include <pgjq/workflow.hpp>
