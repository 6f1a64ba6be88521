// Small builders the policy's spec and status schemas share.
import { z } from "zod";

export const intIn = (min: number, max: number) => z.number().int().min(min).max(max);
// maxLength on enums too: some API server versions estimate CEL cost as if enum strings were unbounded.
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
  z.enum(values).meta({ description, maxLength: Math.max(...values.map((v) => v.length)) });
export const desc = (description: string) => ({ description });
