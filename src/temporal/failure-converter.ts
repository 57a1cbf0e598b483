/**
 * The failure converter of every Temporal client and worker (loaded by path through
 * `DataConverter.failureConverterPath`, also inside the workflow bundle): failure messages
 * and stack traces are moved into an encoded payload, which the payload codec encrypts,
 * so Temporal's history shows only "Encoded failure". Kept free of Node APIs: workflow code
 * loads it.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
