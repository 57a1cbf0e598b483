import { parseHistograms, perStepDelta } from '../../bench/prom-histograms';

const reading = (sum: number, count: number) => `# HELP temporal_activity_schedule_to_start_latency x
# TYPE temporal_activity_schedule_to_start_latency histogram
temporal_activity_schedule_to_start_latency_bucket{task_queue="a",le="50"} 3
temporal_activity_schedule_to_start_latency_sum{task_queue="a"} ${sum / 2}
temporal_activity_schedule_to_start_latency_count{task_queue="a"} ${count / 2}
temporal_activity_schedule_to_start_latency_sum{task_queue="b"} ${sum / 2}
temporal_activity_schedule_to_start_latency_count{task_queue="b"} ${count / 2}
browser_agent_tasks_total{outcome="task_completed"} 4
temporal_request_latency_sum{operation="RespondWorkflowTaskCompleted",namespace="n"} 0.25
temporal_request_latency_count{operation="RespondWorkflowTaskCompleted",namespace="n"} 5
`;

describe('parseHistograms', () => {
  it('sums a histogram over its label sets, keeps it apart by operation, and skips counters and buckets', () => {
    expect(parseHistograms(reading(300, 10))).toEqual({
      temporal_activity_schedule_to_start_latency: { sum: 300, count: 10 },
      'temporal_request_latency{operation=RespondWorkflowTaskCompleted}': { sum: 0.25, count: 5 },
    });
  });
});

describe('perStepDelta', () => {
  it('gives what a histogram gained per step: observations, their mean, their total', () => {
    const d = perStepDelta(parseHistograms(reading(300, 10)), parseHistograms(reading(900, 30)), 10, ['temporal_activity_schedule_to_start_latency', 'missing']);
    expect(d.temporal_activity_schedule_to_start_latency).toEqual({ perStep: 2, meanEach: 30, totalPerStep: 60 });
    expect(d.missing).toBeNull();
  });
});
