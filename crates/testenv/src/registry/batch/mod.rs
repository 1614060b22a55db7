//! The batch (`batch/v1`) kinds with rules of their own.

pub(crate) mod cron_job;
mod cron_schedule;
pub(crate) mod job;
pub(crate) mod job_status;
mod time_zones;
