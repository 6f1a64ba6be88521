// A logger that drops everything, for unit tests of the controller parts.
import { pino } from "pino";
import type { Logger } from "../../runtime/logger.js";

export function quietLogger(): Logger {
  return pino({ level: "silent" });
}
