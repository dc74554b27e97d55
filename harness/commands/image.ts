import { z } from 'zod';
import { RedgreenError } from '../errors.js';
import { DEFAULT_IMAGE, DEFAULT_SUITE } from '../sandbox/docker/image.js';
import { backendNamed, IMAGE_BACKENDS } from '../sandbox/backends.js';

export const ImageBuildOptionsSchema = z.object({
  backend: z.enum(IMAGE_BACKENDS as [string, ...string[]]).default('docker'),
  tag: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._\/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/, 'an image reference like redgreen/runtime:trixie')
    .default(DEFAULT_IMAGE),
  suite: z
    .string()
    .regex(/^[a-z]+$/, 'a Debian suite name like trixie')
    .default(DEFAULT_SUITE),
  mirror: z.url({ protocol: /^https?$/ }).optional(),
  network: z.string().min(1).optional(),
  force: z.boolean().default(false),
  json: z.boolean().default(false),
});
export type ImageBuildOptions = z.infer<typeof ImageBuildOptionsSchema>;

/**
 * `redgreen image build`: the default runtime image for a container backend (docker, podman),
 * from Debian packages (no registry). Reuses an existing tag unless --force. Progress goes to stderr.
 */
export async function imageBuild(options: ImageBuildOptions): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const r = await backendNamed(options.backend).buildImage!({
      tag: options.tag,
      suite: options.suite,
      force: options.force,
      ...(options.mirror ? { mirror: options.mirror } : {}),
      ...(options.network ? { network: options.network } : {}),
      log: (line) => process.stderr.write(`${line}\n`),
      signal: controller.signal,
    });
    if (options.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else if (r.built)
      process.stdout.write(`built ${r.tag} (${r.id.replace(/^sha256:/, '').slice(0, 12)})${r.versions ? `: ${r.versions}` : ''}\n`);
    else process.stdout.write(`${r.tag} already exists (${r.id.replace(/^sha256:/, '').slice(0, 12)}); --force rebuilds it\n`);
    return controller.signal.aborted ? 130 : 0;
  } catch (e) {
    // Whatever failed once Ctrl-C was pressed failed because of it.
    if (controller.signal.aborted)
      throw new RedgreenError('INTERRUPTED', 'image build interrupted; nothing was tagged', undefined, { cause: e });
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
