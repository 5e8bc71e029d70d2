-- Where a meter reading came from: typed in through the API, read off a telematics feed, or answered on an
-- inspection; sourceId names the telematics connection or the inspection. A constant default adds the column
-- without rewriting the table, and every existing row came through the API.
ALTER TABLE "meter_logs" ADD COLUMN "source" TEXT NOT NULL DEFAULT 'api';
ALTER TABLE "meter_logs" ADD COLUMN "sourceId" TEXT;
