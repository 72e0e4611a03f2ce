export { neutraliseCell } from './cells';
export { BASE_FIELDS, type Cell, columnsFor, compileFlattener, EXTRA_COLUMN, flattenItem, KIND_FIELDS } from './columns';
export { CSV_NEWLINE, encodeCsvRecord, writeCsv } from './csv';
export { EXPORT_FORMATS, type ExportFormat, type ExportSubject, exportContentType, exportFileName, isExportFormat } from './format';
export { writeJson } from './json';
export { OUTPUT_CLOSED, pipeTo } from './stream';
export { type ExportRow, type RowEncoder, rowEncoder, type TabularExportOptions } from './rows';
export { XLSX_SHEET_NAME, writeXlsx } from './xlsx';
