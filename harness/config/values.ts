import { z } from 'zod';

/** A whole number from the CLI (a string) or a config (a number), within bounds, with a message that says so. */
export const intFromCli = (min: number, max: number) =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });
