import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { cancelledStep, describeFailure, detailsOf, failureType, isWorkerLoss } from './failures';

const ofActivity = (cause: Error) => new ActivityFailure('activity failed', 'agentStep', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);

describe('failures', () => {
  it('reads the type and the details of an application failure', () => {
    const failure = ApplicationFailure.create({ type: 'PROXY_CONNECTION_FAILED', message: 'refused', details: [{ host: 'p' }] });
    expect(failureType(ofActivity(failure))).toBe('PROXY_CONNECTION_FAILED');
    expect(detailsOf(failure)).toEqual({ host: 'p' });
    expect(detailsOf(ApplicationFailure.create({ message: 'x', details: ['text'] }))).toBeUndefined();
    expect(describeFailure(ofActivity(failure))).toEqual({ code: 'PROXY_CONNECTION_FAILED', message: 'refused', details: { host: 'p' } });
  });

  it('takes a timeout or INSTANCE_LOST for a lost worker', () => {
    expect(isWorkerLoss(ofActivity(new TimeoutFailure('late', undefined, TimeoutType.HEARTBEAT)))).toBe(true);
    expect(isWorkerLoss(ofActivity(ApplicationFailure.create({ type: 'INSTANCE_LOST', message: 'gone' })))).toBe(true);
    expect(isWorkerLoss(ofActivity(ApplicationFailure.create({ type: 'TASK_FAILED', message: 'no' })))).toBe(false);
    expect(describeFailure(ofActivity(new TimeoutFailure('late', undefined, TimeoutType.HEARTBEAT)))).toEqual({ code: 'INSTANCE_LOST', message: 'The browser instance stopped responding' });
  });

  it('reads the tokens a cancelled step spent, when they are well-formed', () => {
    const spent = { usage: { inputTokens: 10, outputTokens: 2 }, cost: 0.001 };
    expect(cancelledStep(ofActivity(new CancelledFailure('cancelled', [spent])))).toEqual(spent);
    // with the agent's words of the step, when it had said any
    expect(cancelledStep(ofActivity(new CancelledFailure('cancelled', [{ ...spent, said: 'Looking.' }])))).toEqual({ ...spent, said: 'Looking.' });
    expect(cancelledStep(ofActivity(new CancelledFailure('cancelled', [{ usage: { inputTokens: 10 }, cost: 1 }])))).toBeUndefined();
    expect(cancelledStep(ofActivity(new CancelledFailure('cancelled')))).toBeUndefined();
    expect(cancelledStep(new CancelledFailure('cancelled', [spent]))).toBeUndefined();
  });
});
