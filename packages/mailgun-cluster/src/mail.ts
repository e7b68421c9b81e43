/**
 * The request mails: their exact text (from the Cluster API book's tutorial) and the markers that let a
 * restarted controller find a mail it sent but did not get to record.
 */

/** On every request mail; the events lookup filters on it server-side. One constant value: Mailgun limits distinct tags. */
export const REQUEST_TAG = 'loopwright-mailgun-cluster';

/**
 * Identifies one send. `uid` is the object's UID, `attempt` the attempt id recorded in status before
 * sending. Both travel as user variables (echoed in Mailgun's events, so they can be searched) and as
 * headers (visible to the recipient and in the raw message, for humans).
 */
export interface SendMarkers {
  uid: string;
  attempt: string;
  /** `Kind namespace/name`, for humans reading the mail or the event. */
  object: string;
}

export interface RequestMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  markers: SendMarkers;
}

export type Priority = 'Urgent' | 'ExtremelyUrgent' | 'BusinessCritical';

export function clusterRequestMail(input: {
  priority: Priority;
  request: string;
  requester: string;
  clusterName: string;
  recipient: string;
  markers: SendMarkers;
}): RequestMail {
  return {
    from: input.requester,
    to: input.recipient,
    subject: `[${input.priority}] New Cluster ${input.clusterName} requested`,
    text: `Hello! One cluster please.\n\n${input.request}\n`,
    markers: input.markers,
  };
}

export function machineRequestMail(input: {
  priority: Priority;
  request: string;
  requester: string;
  machineName: string;
  clusterName: string;
  recipient: string;
  markers: SendMarkers;
}): RequestMail {
  return {
    from: input.requester,
    to: input.recipient,
    subject: `[${input.priority}] New Machine ${input.machineName} for Cluster ${input.clusterName} requested`,
    text: `Hello! One machine please.\n\n${input.request}\n`,
    markers: input.markers,
  };
}

/** The form fields of Mailgun's `POST /v3/<domain>/messages` for `mail`. */
export function messageFields(mail: RequestMail): Record<string, string> {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    'o:tag': REQUEST_TAG,
    'h:X-Loopwright-Uid': mail.markers.uid,
    'h:X-Loopwright-Attempt': mail.markers.attempt,
    'h:X-Loopwright-Object': mail.markers.object,
    'v:loopwright-uid': mail.markers.uid,
    'v:loopwright-attempt': mail.markers.attempt,
  };
}
