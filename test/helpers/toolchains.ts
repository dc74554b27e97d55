import { spawnSync } from 'node:child_process';

/** Whether a toolchain runs here: `<tool> version` (go's spelling, which cargo takes too). */
export const hasToolchain = (tool: string): boolean => spawnSync(tool, ['version'], { stdio: 'ignore' }).status === 0;
